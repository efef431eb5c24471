package dev.infertop.agg;

import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * HdrHistogram's Recorder pattern (record into one histogram, swap it out for each interval) without its
 * cross-thread phaser, with a cheaper record, and with the percentiles of each interval and of the run
 * from the buckets used instead of a walk over the histogram. Collector thread only.
 *
 * <p>No phaser: infertop's collector thread both records and takes the intervals, so a plain swap is enough
 * (the phaser's two atomic operations per value were ~8 % of infertop's CPU under the operator layer).
 *
 * <p>Cheaper record: the operator layer records two values per node group per thread (~40 k/s on the bench
 * model), and HdrHistogram's recordValue under C1 (infertop runs C1 only) is a chain of un-inlined calls,
 * numberOfLeadingZeros among them, not intrinsified: ~20 % of infertop's CPU by perf. A value is counted
 * here in a plain int array, in HdrHistogram's own bucket for it, found from the bits of the value as a
 * double (its exponent is the octave, its top mantissa bits the sub-bucket); the buckets counted are folded
 * into the histogram when the interval is taken, one recordValueWithCount per bucket used. The lowest value
 * of a bucket stands for the values counted in it, so the histogram handed out answers every query (counts,
 * percentiles, min, max, mean) exactly as one the values were recorded into directly.
 *
 * <p>Percentiles from buckets: every tick the live view shows each op's and tensor group's percentiles for
 * the interval and for the run; walking HdrHistogram from min to max (~1,700 buckets over the µs..ms range
 * of op times, two un-inlined calls each) for ~100 histograms was another ~15 %. The buckets counted are
 * known here, in value order: the same answers from a few dozen (interval) or hundred (run) of them.
 */
final class IntervalRecorder {
    /** Values from 2^53 up are not exact as doubles; they (never op times in practice) go to the histogram. */
    private static final long LARGEST_EXACT_DOUBLE = 1L << 53;

    private final int significantDigits;
    private Histogram active;

    /** log2 of HdrHistogram's sub-bucket count: values below 2^this are a bucket each. */
    private final int subBucketBits;
    /** Buckets per octave above that, as mantissa bits: log2 of the sub-bucket half count. */
    private final int octaveBits;

    // This interval: counts by bucket, and the buckets counted (each once: a fold does not scan the array).
    private int[] counts;
    private int[] used = new int[64];
    private int usedCount;
    /** A value went to the histogram directly since the last fold: the buckets do not hold the interval. */
    private boolean recordedDirectly;

    // The interval taken last, as its buckets in value order with their counts.
    private int[] foldedBuckets = new int[64];
    private long[] foldedCounts = new long[64];
    private int foldedCount;
    private boolean foldedComplete;

    // The run's total, bucket by bucket, for the run's percentiles (see addInterval).
    private long[] totalCounts = new long[0];
    private int[] totalBuckets = new int[64];
    private int totalBucketCount;
    private boolean totalComplete = true;
    private long[] scratchCounts = new long[64];

    IntervalRecorder(int significantDigits) {
        this.significantDigits = significantDigits;
        this.active = new Histogram(significantDigits);
        // As HdrHistogram sizes its sub-buckets (lowest discernible value 1): 2·10^digits, to a power of two.
        long largestWithUnitResolution = 2 * (long) Math.pow(10, significantDigits);
        this.subBucketBits = Math.max(1, 64 - Long.numberOfLeadingZeros(largestWithUnitResolution - 1));
        this.octaveBits = subBucketBits - 1;
        this.counts = new int[bucketOf(1L << 24) + 1]; // to ~16 ms; grows on a larger value
    }

    void recordValue(long value) {
        if (value < 0 || value >= LARGEST_EXACT_DOUBLE) {
            active.recordValue(value); // out of the fast path's range (a negative value throws there, as before)
            recordedDirectly = true;
            return;
        }
        int bucket = bucketOf(value);
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

    private void foldInto(Histogram histogram) {
        Arrays.sort(used, 0, usedCount); // bucket numbers are in value order
        if (foldedBuckets.length < usedCount) {
            foldedBuckets = new int[used.length];
            foldedCounts = new long[used.length];
        }
        for (int i = 0; i < usedCount; i++) {
            int bucket = used[i];
            histogram.recordValueWithCount(lowestValueOf(bucket), counts[bucket]);
            foldedBuckets[i] = bucket;
            foldedCounts[i] = counts[bucket];
            counts[bucket] = 0;
        }
        foldedCount = usedCount;
        foldedComplete = !recordedDirectly;
        usedCount = 0;
        recordedDirectly = false;
    }

    /**
     * The values recorded since the last call. {@code recycle} (the histogram this returned the time before,
     * or null) is emptied and records from now on: as with Recorder, the caller must be done with it.
     */
    Histogram getIntervalHistogram(Histogram recycle) {
        foldInto(active);
        Histogram interval = active;
        if (recycle == null || recycle == interval) {
            recycle = new Histogram(significantDigits);
        } else {
            recycle.reset();
        }
        active = recycle;
        return interval;
    }

    /**
     * Adds the interval the last {@link #getIntervalHistogram} returned ({@code interval}) to {@code total},
     * the run's histogram (always the same one, only added to here), keeping its buckets for
     * {@link #totalPercentiles}.
     */
    void addInterval(Histogram interval, Histogram total) {
        if (!foldedComplete || !totalComplete) {
            total.add(interval);
            totalComplete = false; // the run's buckets no longer hold it: its percentiles come from a walk
            return;
        }
        int added = 0;
        for (int i = 0; i < foldedCount; i++) {
            int bucket = foldedBuckets[i];
            total.recordValueWithCount(lowestValueOf(bucket), foldedCounts[i]); // a bucket each, not the whole array
            if (bucket >= totalCounts.length) {
                totalCounts = Arrays.copyOf(totalCounts, Math.max(bucket + 1, totalCounts.length * 2));
            }
            if (totalCounts[bucket] == 0) {
                added++;
            }
            totalCounts[bucket] += foldedCounts[i];
        }
        if (added > 0) {
            mergeNewTotalBuckets(added);
        }
    }

    /** Merges the folded buckets the run had not counted before into the run's (both in value order). */
    private void mergeNewTotalBuckets(int added) {
        int[] merged = new int[Math.max(totalBuckets.length, totalBucketCount + added)];
        int i = 0;
        int j = 0;
        int k = 0;
        while (i < totalBucketCount || j < foldedCount) {
            if (j == foldedCount || (i < totalBucketCount && totalBuckets[i] < foldedBuckets[j])) {
                merged[k++] = totalBuckets[i++];
            } else if (i < totalBucketCount && totalBuckets[i] == foldedBuckets[j]) {
                merged[k++] = totalBuckets[i++];
                j++;
            } else {
                merged[k++] = foldedBuckets[j++];
            }
        }
        totalBuckets = merged;
        totalBucketCount = k;
    }

    /**
     * {@link Percentiles#valuesAndMean(Histogram, double...)} of {@code interval}, the histogram the last
     * {@link #getIntervalHistogram} returned, from the buckets that call folded.
     */
    Percentiles.Pass intervalPercentiles(Histogram interval, double... percentiles) {
        return foldedComplete
                ? pass(interval.getTotalCount(), foldedBuckets, foldedCounts, foldedCount, percentiles)
                : Percentiles.valuesAndMean(interval, percentiles);
    }

    /** The same of {@code total}, the run's histogram {@link #addInterval} adds to, from the run's buckets. */
    Percentiles.Pass totalPercentiles(Histogram total, double... percentiles) {
        if (!totalComplete) {
            return Percentiles.valuesAndMean(total, percentiles);
        }
        if (scratchCounts.length < totalBucketCount) {
            scratchCounts = new long[totalBuckets.length];
        }
        for (int i = 0; i < totalBucketCount; i++) {
            scratchCounts[i] = totalCounts[totalBuckets[i]];
        }
        return pass(total.getTotalCount(), totalBuckets, scratchCounts, totalBucketCount, percentiles);
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
        long highest = n == 0 ? 0 : lowestValueOf(buckets[n - 1]) + widthOf(buckets[n - 1]) - 1;
        for (; next < targets.length; next++) {
            values[next] = highest;
        }
        return new Percentiles.Pass(values, sum / total);
    }
}
