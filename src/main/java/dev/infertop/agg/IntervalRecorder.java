package dev.infertop.agg;

import dev.infertop.history.HdrBuckets;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * HdrHistogram's Recorder pattern (record values, take them per interval) for one collector thread, counting
 * each value in HdrHistogram's own bucket for it and keeping the interval's and the run's figures as those
 * buckets: an HdrHistogram is built only when one is asked for (a metrics scrape; the histogram log keeps the
 * buckets, see {@link #logInterval}). Collector thread only.
 *
 * <p>No phaser: infertop's collector thread both records and takes the intervals (the phaser's two atomic
 * operations per value were a visible share of infertop's CPU under the operator layer).
 *
 * <p>Cheaper record: the operator layer records two values per node group (tens of thousands a second), and
 * HdrHistogram's recordValue under C1 (infertop runs C1 only) is a chain of un-inlined calls,
 * numberOfLeadingZeros among them, not intrinsified: a large share of infertop's CPU by perf (measurements.md). A value is counted here
 * in a plain int array, in HdrHistogram's own bucket for it, found from the bits of the value as a double
 * ({@link HdrBuckets}). The lowest value of a bucket stands for the
 * values counted in it, so a histogram built from the buckets answers every query (counts, percentiles, min,
 * max, mean) exactly as one the values were recorded into directly.
 *
 * <p>Figures from buckets: every tick the live view shows each op's and tensor group's percentiles for the
 * interval and for the run (dozens of each). Folding each interval into an HdrHistogram,
 * adding it to the run's, clearing the recycled one and walking them from min to max (thousands of buckets over
 * the µs..ms range of op times, un-inlined calls each) was a large share of the collector thread's JFR samples
 * with every graph traced (measurements.md); the buckets counted are known here, in value order: the same answers from a few dozen of
 * them (the interval), or a few steps down a tree of the run's counts (the run, whose buckets number in the
 * thousands after minutes).
 *
 * <p>Values from 2^53 ns (104 days) up are not exact as doubles: they are counted as 2^53 - 1.
 */
final class IntervalRecorder {
    /** Values from 2^53 up are not exact as doubles: counted as the largest below it. */
    static final long LARGEST_COUNTED = (1L << 53) - 1;
    /** p50, p90, p99: a {@link LatencySummary}'s. */
    private static final double[] SUMMARY_PERCENTILES = {50, 90, 99};

    private final HdrBuckets buckets;

    // This interval: counts by bucket, and the buckets counted (each once: closing does not scan the array).
    private int[] counts;
    private int[] used = new int[64];
    private int usedCount;

    // The interval closed last, as its buckets in value order with their counts.
    private int[] closedBuckets = new int[64];
    private long[] closedCounts = new long[64];
    private int closedCount;
    private long closedTotal;

    // The run's total, bucket by bucket, and the buckets it has counted, in value order.
    private long[] totalCounts = new long[0];
    private int[] totalBuckets = new int[64];
    private int totalBucketCount;
    private long totalTotal;
    private long[] scratchCounts = new long[64];
    /**
     * The run's counts as a Fenwick tree over bucket numbers (size a power of two): a percentile of the run is
     * found in log2(buckets) steps, not by walking the run's hundreds to thousands of buckets every tick (that
     * walk, for every op and tensor group, was a visible share of infertop's CPU with every graph traced).
     */
    private long[] totalTree = new long[0];
    /**
     * The sum of the run's median-equivalent values times their counts (HdrHistogram's mean numerator), kept
     * while it is below 2^53: then every partial sum of the walk in value order is an exact double too, so
     * the mean is the same to the last bit. From 2^53 up the run's figures come from the walk.
     */
    private long totalValueSum;
    private boolean totalValueSumExact = true;
    /** The run's histogram as last built (null: not built since the last close). */
    private Histogram totalHistogram;

    IntervalRecorder(int significantDigits) {
        this.buckets = new HdrBuckets(significantDigits);
        this.counts = new int[buckets.bucketOf(1L << 24) + 1]; // to ~16 ms; grows on a larger value
    }

    /** Counts {@code value} (≥ 0; from 2^53 up as 2^53 - 1) in this interval. */
    void recordValue(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("a negative value cannot be recorded: " + value);
        }
        int bucket = buckets.bucketOf(Math.min(value, LARGEST_COUNTED));
        if (bucket >= counts.length) {
            counts = Arrays.copyOf(counts, Math.max(bucket + 1, counts.length * 2));
        }
        if (counts[bucket]++ == 0) {
            if (usedCount == used.length) {
                used = Arrays.copyOf(used, usedCount * 2);
            }
            used[usedCount++] = bucket;
        }
    }

    /**
     * Ends the interval: the values counted since the last close become the closed interval (its figures, and
     * {@link #logInterval}) and are added to the run's. Nothing is walked but the buckets used.
     */
    void closeInterval() {
        Arrays.sort(used, 0, usedCount); // bucket numbers are in value order
        if (closedBuckets.length < usedCount) {
            closedBuckets = new int[used.length];
            closedCounts = new long[used.length];
        }
        long total = 0;
        for (int i = 0; i < usedCount; i++) {
            int bucket = used[i];
            closedBuckets[i] = bucket;
            closedCounts[i] = counts[bucket];
            total += counts[bucket];
            counts[bucket] = 0;
        }
        closedCount = usedCount;
        closedTotal = total;
        usedCount = 0;
        addClosedToTotal();
    }

    private void addClosedToTotal() {
        int added = 0;
        for (int i = 0; i < closedCount; i++) {
            int bucket = closedBuckets[i];
            if (bucket >= totalCounts.length) {
                totalCounts = Arrays.copyOf(totalCounts, Math.max(bucket + 1, totalCounts.length * 2));
            }
            if (totalCounts[bucket] == 0) {
                added++;
            }
            totalCounts[bucket] += closedCounts[i];
            addToTree(bucket, closedCounts[i]);
            addToValueSum(bucket, closedCounts[i]);
        }
        totalTotal += closedTotal;
        if (added > 0) {
            mergeNewTotalBuckets(added);
        }
        if (closedCount > 0) {
            totalHistogram = null;
        }
    }

    private void addToTree(int bucket, long count) {
        if (bucket >= totalTree.length) {
            rebuildTree(bucket + 1);
            return; // counted from totalCounts, which already holds it
        }
        for (int i = bucket + 1; i <= totalTree.length; i += i & -i) {
            totalTree[i - 1] += count;
        }
    }

    /** A tree of at least {@code bucketCount} buckets (a power of two), built again from the run's counts. */
    private void rebuildTree(int bucketCount) {
        int wanted = Math.max(bucketCount, totalCounts.length);
        int size = wanted <= 1 ? 1 : Integer.highestOneBit(wanted - 1) << 1;
        long[] tree = new long[size];
        for (int b = 0; b < Math.min(size, totalCounts.length); b++) {
            tree[b] = totalCounts[b]; // 1-based node b + 1, stored at b
        }
        for (int i = 1; i <= size; i++) {
            int parent = i + (i & -i);
            if (parent <= size) {
                tree[parent - 1] += tree[i - 1];
            }
        }
        totalTree = tree;
    }

    /** The lowest bucket whose running count (from bucket 0 up) reaches {@code process} (1 ≤ target ≤ total). */
    private int bucketReaching(long target) {
        int position = 0;
        long remaining = target;
        for (int step = totalTree.length; step > 0; step >>= 1) {
            int next = position + step;
            if (next <= totalTree.length && totalTree[next - 1] < remaining) {
                position = next;
                remaining -= totalTree[next - 1];
            }
        }
        return position; // node position + 1, bucket position
    }

    private void addToValueSum(int bucket, long count) {
        if (!totalValueSumExact) {
            return;
        }
        long median = buckets.lowestValueOf(bucket) + (buckets.widthOf(bucket) >> 1);
        long term = median * count;
        if (Math.multiplyHigh(median, count) != 0 || term < 0 || term >= 1L << 53
                || (totalValueSum += term) >= 1L << 53) {
            totalValueSumExact = false;
        }
    }

    /**
     * Merges the closed buckets the run had not counted before into the run's (both in value order), in place
     * from the back: the run's list grows by {@code added} and no entry moves before it is read.
     */
    private void mergeNewTotalBuckets(int added) {
        int size = totalBucketCount + added;
        if (totalBuckets.length < size) {
            totalBuckets = Arrays.copyOf(totalBuckets, Math.max(size, totalBuckets.length * 2));
        }
        int i = totalBucketCount - 1;
        int j = closedCount - 1;
        int k = size - 1;
        while (j >= 0) {
            if (i >= 0 && totalBuckets[i] > closedBuckets[j]) {
                totalBuckets[k--] = totalBuckets[i--];
            } else if (i >= 0 && totalBuckets[i] == closedBuckets[j]) {
                totalBuckets[k--] = totalBuckets[i--]; // counted before: once
                j--;
            } else {
                totalBuckets[k--] = closedBuckets[j--];
            }
        }
        totalBucketCount = size;
    }

    /**
     * Keeps the interval closed last in {@code log} under {@code tag}, as its buckets (nothing when it is
     * empty): no histogram is built, cleared or encoded for it until a snapshot reads the log.
     */
    void logInterval(IntervalHistograms log, String tag) {
        log.addBuckets(tag, buckets, closedBuckets, closedCounts, closedCount, intervalMax());
    }

    /** The run's values (every closed interval) as a histogram, built when asked after a close added to it. */
    Histogram totalHistogram() {
        if (totalHistogram == null) {
            Histogram histogram = new Histogram(buckets.significantDigits());
            for (int i = 0; i < totalBucketCount; i++) {
                int bucket = totalBuckets[i];
                histogram.recordValueWithCount(buckets.lowestValueOf(bucket), totalCounts[bucket]);
            }
            totalHistogram = histogram;
        }
        return totalHistogram;
    }

    /** The interval closed last, as {@link LatencySummary#ofNanos} says it of its histogram. */
    LatencySummary intervalSummary() {
        return summary(closedTotal, intervalMax(), intervalPercentiles(SUMMARY_PERCENTILES));
    }

    /** The run's closed intervals, as {@link LatencySummary#ofNanos} says it of their histogram. */
    LatencySummary totalSummary() {
        return summary(totalTotal, totalMax(), totalPercentiles(SUMMARY_PERCENTILES));
    }

    private static LatencySummary summary(long count, long maxNs, Percentiles.Pass pass) {
        long[] ns = pass.values();
        return LatencySummary.ofNanos(count, ns[0], ns[1], ns[2], maxNs, pass.mean());
    }

    /** Values in the interval closed last. */
    long intervalCount() {
        return closedTotal;
    }

    /** Values in the run's closed intervals. */
    long totalCount() {
        return totalTotal;
    }

    /** The interval's min as HdrHistogram's getMinValue says it (0 if empty or a zero was counted). */
    long intervalMin() {
        return closedCount == 0 ? 0 : buckets.lowestValueOf(closedBuckets[0]);
    }

    /** The interval's max as HdrHistogram's getMaxValue says it: the highest value equivalent to it (0 if empty). */
    long intervalMax() {
        return closedCount == 0 ? 0 : buckets.highestValueOf(closedBuckets[closedCount - 1]);
    }

    /** The run's min, as {@link #intervalMin}. */
    long totalMin() {
        return totalBucketCount == 0 ? 0 : buckets.lowestValueOf(totalBuckets[0]);
    }

    /** The run's max, as {@link #intervalMax}. */
    long totalMax() {
        return totalBucketCount == 0 ? 0 : buckets.highestValueOf(totalBuckets[totalBucketCount - 1]);
    }

    /** {@link Percentiles#valuesAndMean(Histogram, double...)} of the interval closed last, from its buckets. */
    Percentiles.Pass intervalPercentiles(double... percentiles) {
        return pass(closedTotal, closedBuckets, closedCounts, closedCount, percentiles);
    }

    /**
     * The same of the run's closed intervals: the percentiles from the run's tree, the mean from its exact sum
     * (the walk over the run's buckets once that sum has reached 2^53).
     */
    Percentiles.Pass totalPercentiles(double... percentiles) {
        if (!totalValueSumExact) {
            return walkTotal(percentiles);
        }
        long[] values = new long[percentiles.length];
        if (totalTotal == 0) {
            return new Percentiles.Pass(values, 0.0);
        }
        long[] targets = Percentiles.targets(totalTotal, percentiles);
        for (int i = 0; i < targets.length; i++) {
            values[i] = buckets.highestValueOf(bucketReaching(targets[i]));
        }
        return new Percentiles.Pass(values, (double) totalValueSum / totalTotal);
    }

    /** {@link #totalPercentiles} by walking the run's buckets in value order. */
    Percentiles.Pass walkTotal(double... percentiles) {
        if (scratchCounts.length < totalBucketCount) {
            scratchCounts = new long[totalBuckets.length];
        }
        for (int i = 0; i < totalBucketCount; i++) {
            scratchCounts[i] = totalCounts[totalBuckets[i]];
        }
        return pass(totalTotal, totalBuckets, scratchCounts, totalBucketCount, percentiles);
    }

    /**
     * Percentile values (the highest value equivalent to the bucket reaching each target count) and the mean
     * (median-equivalent values times counts, summed in value order), as {@link Percentiles} works them out
     * from the histogram, here from the {@code n} bucket {@code numbers} in value order holding all {@code total} values.
     */
    private Percentiles.Pass pass(long total, int[] numbers, long[] bucketCounts, int n, double[] percentiles) {
        long[] values = new long[percentiles.length];
        if (total == 0) {
            return new Percentiles.Pass(values, 0.0);
        }
        long[] targets = Percentiles.targets(total, percentiles);
        int next = 0;
        long seen = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            long lowest = buckets.lowestValueOf(numbers[i]);
            long width = buckets.widthOf(numbers[i]);
            seen += bucketCounts[i];
            sum += (lowest + (width >> 1)) * (double) bucketCounts[i];
            while (next < targets.length && seen >= targets[next]) {
                values[next++] = lowest + width - 1;
            }
        }
        long highest = n == 0 ? 0 : buckets.highestValueOf(numbers[n - 1]);
        for (; next < targets.length; next++) {
            values[next] = highest;
        }
        return new Percentiles.Pass(values, sum / total);
    }
}
