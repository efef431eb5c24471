package dev.infertop.model;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Several percentiles of a histogram in one pass over its recorded values. HdrHistogram's
 * getValueAtPercentile scans the counts from the start for each call; a snapshot asks ~10 percentiles of
 * ~100 histograms every tick, and one scan each keeps infertop's own CPU low. Same answers as
 * getValueAtPercentile (the highest value equivalent to the bucket reaching the percentile's count).
 */
public final class Percentiles {
    private Percentiles() {}

    /** Percentile values and the mean of one histogram, from a single pass. */
    public record Pass(long[] values, double mean) {}

    /**
     * {@link #valuesAt} and {@link Histogram#getMean()} in one pass: the mean needs every recorded value, and a
     * second pass for it doubled the snapshot's cost (TTFT/TPOT summaries every tick were most of infertop's
     * own CPU with the token and graph layers). The mean is summed as HdrHistogram sums it, so it is equal.
     *
     * @param percentiles ascending, 0..100
     */
    public static Pass valuesAndMean(Histogram histogram, double... percentiles) {
        long[] values = new long[percentiles.length];
        long total = histogram.getTotalCount();
        if (total == 0) {
            return new Pass(values, 0.0);
        }
        long[] targets = targets(total, percentiles);
        int next = 0;
        long seen = 0;
        double totalValue = 0;
        for (HistogramIterationValue value : histogram.recordedValues()) {
            long count = value.getCountAtValueIteratedTo();
            seen += count;
            totalValue += histogram.medianEquivalentValue(value.getValueIteratedTo()) * (double) count;
            while (next < targets.length && seen >= targets[next]) {
                values[next++] = histogram.highestEquivalentValue(value.getValueIteratedTo());
            }
        }
        long max = histogram.getMaxValue();
        for (; next < targets.length; next++) {
            values[next] = max;
        }
        return new Pass(values, (totalValue * 1.0) / total);
    }

    private static long[] targets(long total, double[] percentiles) {
        long[] targets = new long[percentiles.length];
        for (int i = 0; i < percentiles.length; i++) {
            targets[i] = Math.max(1, (long) ((Math.min(percentiles[i], 100.0) / 100.0) * total + 0.5));
        }
        return targets;
    }

    /** @param percentiles ascending, 0..100 */
    public static long[] valuesAt(Histogram histogram, double... percentiles) {
        long[] values = new long[percentiles.length];
        long total = histogram.getTotalCount();
        if (total == 0) {
            return values;
        }
        long[] targets = new long[percentiles.length];
        for (int i = 0; i < percentiles.length; i++) {
            targets[i] = Math.max(1, (long) ((Math.min(percentiles[i], 100.0) / 100.0) * total + 0.5));
        }
        int next = 0;
        long seen = 0;
        for (HistogramIterationValue value : histogram.recordedValues()) {
            seen += value.getCountAtValueIteratedTo();
            while (next < targets.length && seen >= targets[next]) {
                values[next++] = histogram.highestEquivalentValue(value.getValueIteratedTo());
            }
            if (next == targets.length) {
                break;
            }
        }
        long max = histogram.getMaxValue();
        for (; next < targets.length; next++) {
            values[next] = max;
        }
        return values;
    }
}
