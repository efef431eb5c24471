package dev.infertop.model;

import org.HdrHistogram.Histogram;

/** Percentiles of a latency histogram recorded in nanoseconds, frozen for a snapshot, in milliseconds. */
public record LatencySummary(long count, double p50Ms, double p90Ms, double p99Ms, double maxMs, double meanMs) {
    public static final LatencySummary EMPTY = new LatencySummary(0, 0, 0, 0, 0, 0);

    public static LatencySummary ofNanos(Histogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return EMPTY;
        }
        return new LatencySummary(histogram.getTotalCount(),
                histogram.getValueAtPercentile(50) / 1e6,
                histogram.getValueAtPercentile(90) / 1e6,
                histogram.getValueAtPercentile(99) / 1e6,
                histogram.getMaxValue() / 1e6,
                histogram.getMean() / 1e6);
    }
}
