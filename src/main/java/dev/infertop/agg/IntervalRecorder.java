package dev.infertop.agg;

import dev.infertop.model.LatencySummary;
import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * HdrHistogram's Recorder pattern (record values, take them per interval) for one collector thread, counting
 * each value in HdrHistogram's own bucket for it and keeping the interval's and the run's figures as those
 * buckets: an HdrHistogram is built only when one is asked for (a histogram log, a metrics scrape). Collector
 * thread only.
 *
 * <p>No phaser: infertop's collector thread both records and takes the intervals (the phaser's two atomic
 * operations per value were ~8 % of infertop's CPU under the operator layer).
 *
 * <p>Cheaper record: the operator layer records two values per node group (~20 k/s on the bench model), and
 * HdrHistogram's recordValue under C1 (infertop runs C1 only) is a chain of un-inlined calls,
 * numberOfLeadingZeros among them, not intrinsified: ~20 % of infertop's CPU by perf. A value is counted here
 * in a plain int array, in HdrHistogram's own bucket for it, found from the bits of the value as a double (its
 * exponent is the octave, its top mantissa bits the sub-bucket). The lowest value of a bucket stands for the
 * values counted in it, so a histogram built from the buckets answers every query (counts, percentiles, min,
 * max, mean) exactly as one the values were recorded into directly.
 *
 * <p>Figures from buckets: every tick the live view shows each op's and tensor group's percentiles for the
 * interval and for the run (~50 of each on a 16-layer model). Folding each interval into an HdrHistogram,
 * adding it to the run's, clearing the recycled one and walking them from min to max (~2,500 buckets over the
 * µs..ms range of op times, un-inlined calls each) was 27 % of the collector thread's JFR samples with every
 * graph traced; the buckets counted are known here, in value order: the same answers from a few dozen
 * (interval) or hundred (run) of them.
 *
 * <p>Values from 2^53 ns (104 days) up are not exact as doubles: they are counted as 2^53 - 1.
 */
final class IntervalRecorder {
    /** Values from 2^53 up are not exact as doubles: counted as the largest below it. */
    static final long LARGEST_COUNTED = (1L << 53) - 1;
    /** p50, p90, p99: a {@link LatencySummary}'s. */
    private static final double[] SUMMARY_PERCENTILES = {50, 90, 99};

    private final int significantDigits;

    /** log2 of HdrHistogram's sub-bucket count: values below 2^this are a bucket each. */
    private final int subBucketBits;
    /** Buckets per octave above that, as mantissa bits: log2 of the sub-bucket half count. */
    private final int octaveBits;

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
    /** The run's histogram as last built (null: not built since the last close). */
    private Histogram totalHistogram;

    IntervalRecorder(int significantDigits) {
        this.significantDigits = significantDigits;
        // As HdrHistogram sizes its sub-buckets (lowest discernible value 1): 2·10^digits, to a power of two.
        long largestWithUnitResolution = 2 * (long) Math.pow(10, significantDigits);
        this.subBucketBits = Math.max(1, 64 - Long.numberOfLeadingZeros(largestWithUnitResolution - 1));
        this.octaveBits = subBucketBits - 1;
        this.counts = new int[bucketOf(1L << 24) + 1]; // to ~16 ms; grows on a larger value
    }

    /** Counts {@code value} (≥ 0; from 2^53 up as 2^53 - 1) in this interval. */
    void recordValue(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("a negative value cannot be recorded: " + value);
        }
        int bucket = bucketOf(Math.min(value, LARGEST_COUNTED));
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

    /** HdrHistogram's bucket of {@code value} (0 ≤ value < 2^53), numbered in value order. */
    private int bucketOf(long value) {
        if (value < 1L << subBucketBits) {
            return (int) value;
        }
        long bits = Double.doubleToRawLongBits((double) value);
        int octave = (int) (bits >>> 52) - 1023;
        int step = (int) (bits >>> (52 - octaveBits)) & ((1 << octaveBits) - 1);
        return (1 << subBucketBits) + ((octave - subBucketBits) << octaveBits) + step;
    }

    /** The lowest value of {@code bucket}: every value counted in it is equivalent to this one. */
    private long lowestValueOf(int bucket) {
        if (bucket < 1 << subBucketBits) {
            return bucket;
        }
        int above = bucket - (1 << subBucketBits);
        int octave = (above >>> octaveBits) + subBucketBits;
        long step = above & ((1 << octaveBits) - 1);
        return (1L << octave) | (step << (octave - octaveBits));
    }

    /** How many values {@code bucket} spans (HdrHistogram's sizeOfEquivalentValueRange). */
    private long widthOf(int bucket) {
        if (bucket < 1 << subBucketBits) {
            return 1;
        }
        int octave = ((bucket - (1 << subBucketBits)) >>> octaveBits) + subBucketBits;
        return 1L << (octave - octaveBits);
    }

    /**
     * Ends the interval: the values counted since the last close become the closed interval (its figures, and
     * {@link #intervalHistogram}) and are added to the run's. Nothing is walked but the buckets used.
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
        }
        totalTotal += closedTotal;
        if (added > 0) {
            mergeNewTotalBuckets(added);
        }
        if (closedCount > 0) {
            totalHistogram = null;
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
     * The interval closed last as a histogram: {@code recycle} (of this recorder's digits) emptied and filled,
     * or a new one if null.
     */
    Histogram intervalHistogram(Histogram recycle) {
        Histogram histogram = recycle == null ? new Histogram(significantDigits) : recycle;
        if (histogram.getTotalCount() > 0) {
            histogram.reset(); // clears every bucket (~17 k for 3 digits up to 30 ms): not when already empty
        }
        for (int i = 0; i < closedCount; i++) {
            histogram.recordValueWithCount(lowestValueOf(closedBuckets[i]), closedCounts[i]);
        }
        return histogram;
    }

    /** The run's values (every closed interval) as a histogram, built when asked after a close added to it. */
    Histogram totalHistogram() {
        if (totalHistogram == null) {
            Histogram histogram = new Histogram(significantDigits);
            for (int i = 0; i < totalBucketCount; i++) {
                int bucket = totalBuckets[i];
                histogram.recordValueWithCount(lowestValueOf(bucket), totalCounts[bucket]);
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
        return closedCount == 0 ? 0 : lowestValueOf(closedBuckets[0]);
    }

    /** The interval's max as HdrHistogram's getMaxValue says it: the highest value equivalent to it (0 if empty). */
    long intervalMax() {
        return closedCount == 0 ? 0 : highestValueOf(closedBuckets[closedCount - 1]);
    }

    /** The run's min, as {@link #intervalMin}. */
    long totalMin() {
        return totalBucketCount == 0 ? 0 : lowestValueOf(totalBuckets[0]);
    }

    /** The run's max, as {@link #intervalMax}. */
    long totalMax() {
        return totalBucketCount == 0 ? 0 : highestValueOf(totalBuckets[totalBucketCount - 1]);
    }

    private long highestValueOf(int bucket) {
        return lowestValueOf(bucket) + widthOf(bucket) - 1;
    }

    /** {@link Percentiles#valuesAndMean(Histogram, double...)} of the interval closed last, from its buckets. */
    Percentiles.Pass intervalPercentiles(double... percentiles) {
        return pass(closedTotal, closedBuckets, closedCounts, closedCount, percentiles);
    }

    /** The same of the run's closed intervals, from the run's buckets. */
    Percentiles.Pass totalPercentiles(double... percentiles) {
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
     * from the histogram, here from {@code n} buckets in value order holding all {@code total} values.
     */
    private Percentiles.Pass pass(long total, int[] buckets, long[] bucketCounts, int n, double[] percentiles) {
        long[] values = new long[percentiles.length];
        if (total == 0) {
            return new Percentiles.Pass(values, 0.0);
        }
        long[] targets = Percentiles.targets(total, percentiles);
        int next = 0;
        long seen = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            long lowest = lowestValueOf(buckets[i]);
            long width = widthOf(buckets[i]);
            seen += bucketCounts[i];
            sum += (lowest + (width >> 1)) * (double) bucketCounts[i];
            while (next < targets.length && seen >= targets[next]) {
                values[next++] = lowest + width - 1;
            }
        }
        long highest = n == 0 ? 0 : highestValueOf(buckets[n - 1]);
        for (; next < targets.length; next++) {
            values[next] = highest;
        }
        return new Percentiles.Pass(values, sum / total);
    }
}
