package dev.infertop.model;

import org.HdrHistogram.Histogram;

/** Percentiles of a latency histogram recorded in nanoseconds, frozen for a snapshot, in milliseconds. */
public record LatencySummary(long count, double p50Ms, double p90Ms, double p99Ms, double maxMs, double meanMs) {
    public static final LatencySummary EMPTY = new LatencySummary(0, 0, 0, 0, 0, 0);

    /**
     * Tokens per second at the median time per token: the steady decode speed, insensitive to the odd slow
     * call (a warm-up, a graph rebuilt for a new batch shape) that the busy-time average includes.
     */
    public double medianTokensPerSecond() {
        return p50Ms <= 0 ? 0.0 : 1000.0 / p50Ms;
    }

    public static LatencySummary ofNanos(Histogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return EMPTY;
        }
        Percentiles.Pass pass = Percentiles.valuesAndMean(histogram, 50, 90, 99);
        long[] ns = pass.values();
        return ofNanos(histogram.getTotalCount(), ns[0], ns[1], ns[2], histogram.getMaxValue(), pass.mean());
    }

    /** From figures in nanoseconds (a histogram's, or buckets' counted as HdrHistogram would); EMPTY if count is 0. */
    public static LatencySummary ofNanos(long count, long p50Ns, long p90Ns, long p99Ns, long maxNs, double meanNs) {
        if (count == 0) {
            return EMPTY;
        }
        return new LatencySummary(count, p50Ns / 1e6, p90Ns / 1e6, p99Ns / 1e6, maxNs / 1e6, meanNs / 1e6);
    }
}
