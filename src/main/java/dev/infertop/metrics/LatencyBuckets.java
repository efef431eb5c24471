package dev.infertop.metrics;

import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * A run's HdrHistogram of latencies (ns) counted into a Prometheus classic histogram's buckets: for each edge,
 * the values recorded at or below it, as HdrHistogram counts them ({@code getCountBetweenValues(0, edge)}: a
 * value's bucket of equivalent values is at or below the edge's), so the counts are exact for the histogram,
 * which holds each value to its significant digits. Immutable.
 *
 * @param edgesNs    bucket upper bounds (le), ascending; +Inf is implied after the last
 * @param counts     values per bucket, not cumulative: {@code counts[i]} in (edge i-1, edge i], the last
 *                   entry (index {@code edgesNs.length}) above every edge
 * @param count      values in all
 * @param sumSeconds the values' sum, in seconds (kept with the figures the histogram came with: an op's
 *                   exact wall time, HdrHistogram's mean times the count for TTFT and TPOT)
 */
public record LatencyBuckets(long[] edgesNs, long[] counts, long count, double sumSeconds) {
    private static final long MS = 1_000_000L;
    private static final long US = 1_000L;

    /** TPOT (one decode step): 0.1 ms to 2 s, 1-2-5 per decade. */
    public static final long[] TPOT_EDGES_NS = {100 * US, 200 * US, 500 * US, MS, 2 * MS, 5 * MS, 10 * MS,
            20 * MS, 50 * MS, 100 * MS, 200 * MS, 500 * MS, 1000 * MS, 2000 * MS};
    /** TTFT (one prefill call): 0.5 ms to 60 s. */
    public static final long[] TTFT_EDGES_NS = {500 * US, MS, 2 * MS, 5 * MS, 10 * MS, 20 * MS, 50 * MS,
            100 * MS, 200 * MS, 500 * MS, 1000 * MS, 2000 * MS, 5000 * MS, 10_000 * MS, 20_000 * MS, 60_000 * MS};
    /** One op's node group (wall time, barrier to barrier): 1 µs to 100 ms. */
    public static final long[] OP_EDGES_NS = {US, 2 * US, 5 * US, 10 * US, 20 * US, 50 * US, 100 * US, 200 * US,
            500 * US, MS, 2 * MS, 5 * MS, 10 * MS, 20 * MS, 50 * MS, 100 * MS};

    public LatencyBuckets {
        edgesNs = edgesNs.clone();
        counts = counts.clone();
        if (counts.length != edgesNs.length + 1) {
            throw new IllegalArgumentException("one count per edge and one above them all");
        }
    }

    public static LatencyBuckets empty(long[] edgesNs) {
        return new LatencyBuckets(edgesNs, new long[edgesNs.length + 1], 0, 0);
    }

    /**
     * Counts {@code histogram} into the buckets: one walk over its counts array from 0 to the last edge or its
     * highest value, whichever is lower, edge range by edge range ({@code getCountBetweenValues} from the
     * value after the previous edge's bucket). No sum: the caller has it already ({@link #withSumSeconds}).
     */
    public static LatencyBuckets of(Histogram histogram, long[] edgesNs) {
        long[] counts = new long[edgesNs.length + 1];
        long total = histogram.getTotalCount();
        long highest = histogram.getMaxValue(); // the highest value equivalent to the largest recorded
        long below = 0;
        for (int i = 0; i < edgesNs.length && below < total; i++) {
            long cumulative;
            if (edgesNs[i] >= highest) {
                cumulative = total;
            } else {
                long from = i == 0 ? 0 : histogram.nextNonEquivalentValue(edgesNs[i - 1]);
                cumulative = below + (from > edgesNs[i] ? 0 : histogram.getCountBetweenValues(from, edgesNs[i]));
            }
            counts[i] = cumulative - below;
            below = cumulative;
        }
        counts[edgesNs.length] = total - below;
        return new LatencyBuckets(edgesNs, counts, total, 0);
    }

    /** The bucket upper bounds in seconds, +Inf last. */
    public double[] upperBoundsSeconds() {
        double[] bounds = new double[edgesNs.length + 1];
        for (int i = 0; i < edgesNs.length; i++) {
            bounds[i] = edgesNs[i] / 1e9;
        }
        bounds[edgesNs.length] = Double.POSITIVE_INFINITY;
        return bounds;
    }

    /** Values at or below edge {@code i}. */
    public long cumulative(int i) {
        long sum = 0;
        for (int k = 0; k <= i; k++) {
            sum += counts[k];
        }
        return sum;
    }

    /** The same buckets with {@code sumSeconds} instead (an exact sum kept elsewhere). */
    public LatencyBuckets withSumSeconds(double newSumSeconds) {
        return new LatencyBuckets(edgesNs, counts, count, newSumSeconds);
    }

    @Override
    public long[] edgesNs() {
        return edgesNs.clone();
    }

    @Override
    public long[] counts() {
        return counts.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LatencyBuckets b && Arrays.equals(edgesNs, b.edgesNs) && Arrays.equals(counts, b.counts)
                && count == b.count && Double.compare(sumSeconds, b.sumSeconds) == 0;
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(counts) + Long.hashCode(count);
    }

    @Override
    public String toString() {
        return "LatencyBuckets" + Arrays.toString(edgesNs) + "=" + Arrays.toString(counts) + " count " + count
                + " sum " + sumSeconds + " s";
    }
}
