package dev.infertop.model;

import org.HdrHistogram.Histogram;

/**
 * Several percentiles of a histogram in one pass over its recorded values. HdrHistogram's
 * getValueAtPercentile scans the counts from the start for each call; a snapshot asks ~10 percentiles of
 * ~100 histograms every tick, and one scan each keeps infertop's own CPU low. The scan starts at the lowest
 * recorded value, not at 0: a 3-digit histogram of ~14 ms token times has ~15,000 empty buckets below its
 * first value and ~1,500 from there to its max, and walking those was most of a tick's cost under the token
 * and graph layers. Same answers as getValueAtPercentile (the highest value equivalent to the bucket
 * reaching the percentile's count).
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
        double totalValue = scan(histogram, targets(total, percentiles), values, true);
        return new Pass(values, totalValue / total);
    }

    /** @param percentiles ascending, 0..100 */
    public static long[] valuesAt(Histogram histogram, double... percentiles) {
        long[] values = new long[percentiles.length];
        long total = histogram.getTotalCount();
        if (total == 0) {
            return values;
        }
        scan(histogram, targets(total, percentiles), values, false);
        return values;
    }

    /**
     * Walks the buckets from the lowest recorded value up, filling {@code values} as the running count reaches
     * each target; with {@code wantSum}, to the last recorded value, returning the sum of median-equivalent
     * values (HdrHistogram's mean numerator). Values no bucket reached are the max.
     */
    private static double scan(Histogram histogram, long[] targets, long[] values, boolean wantSum) {
        long total = histogram.getTotalCount();
        long max = histogram.getMaxValue();
        int next = 0;
        long seen = 0;
        double sum = 0;
        // The lowest recorded value: 0 when a zero was recorded (getMinNonZeroValue skips zeros).
        long value = histogram.getCountAtValue(0) > 0 ? 0 : histogram.lowestEquivalentValue(histogram.getMinNonZeroValue());
        while (seen < total && value <= max) {
            long count = histogram.getCountAtValue(value);
            if (count > 0) {
                seen += count;
                if (wantSum) {
                    sum += histogram.medianEquivalentValue(value) * (double) count;
                }
                while (next < targets.length && seen >= targets[next]) {
                    values[next++] = histogram.highestEquivalentValue(value);
                }
                if (!wantSum && next == targets.length) {
                    break;
                }
            }
            value = histogram.nextNonEquivalentValue(value);
        }
        for (; next < targets.length; next++) {
            values[next] = max;
        }
        return sum;
    }

    /** The running count at which each percentile is reached in {@code total} values (at least 1). */
    public static long[] targets(long total, double[] percentiles) {
        long[] targets = new long[percentiles.length];
        for (int i = 0; i < percentiles.length; i++) {
            targets[i] = Math.max(1, (long) ((Math.min(percentiles[i], 100.0) / 100.0) * total + 0.5));
        }
        return targets;
    }
}
