package dev.infertop.agg;

import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * HdrHistogram's Recorder pattern (record into one histogram, swap it out for each interval) without its
 * cross-thread phaser, and with a cheaper record. Collector thread only.
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
    private int[] counts;
    /** The buckets counted since the last fold, each once, so a fold does not scan the whole array. */
    private int[] used = new int[64];
    private int usedCount;
    /** Whether a value went to the histogram directly since the last fold (then the folded buckets are not all). */
    private boolean recordedDirectly;
    // The interval taken last, as its buckets in value order: its percentiles without a walk over the histogram.
    private long[] foldedLowestValues = new long[64];
    private int[] foldedCounts = new int[64];
    private int foldedCount;
    private boolean foldedComplete;

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

    private void foldInto(Histogram histogram) {
        Arrays.sort(used, 0, usedCount); // bucket numbers are in value order
        if (foldedLowestValues.length < usedCount) {
            foldedLowestValues = new long[used.length];
            foldedCounts = new int[used.length];
        }
        for (int i = 0; i < usedCount; i++) {
            int bucket = used[i];
            long lowestValue = lowestValueOf(bucket);
            histogram.recordValueWithCount(lowestValue, counts[bucket]);
            foldedLowestValues[i] = lowestValue;
            foldedCounts[i] = counts[bucket];
            counts[bucket] = 0;
        }
        foldedCount = usedCount;
        foldedComplete = !recordedDirectly;
        usedCount = 0;
        recordedDirectly = false;
    }

    /** Adds the interval the last {@link #getIntervalHistogram} returned ({@code interval}) to {@code total}. */
    void addInterval(Histogram interval, Histogram total) {
        if (!foldedComplete) {
            total.add(interval);
            return;
        }
        for (int i = 0; i < foldedCount; i++) {
            total.recordValueWithCount(foldedLowestValues[i], foldedCounts[i]); // a bucket each, not the whole array
        }
    }

    /**
     * {@link Percentiles#valuesAndMean(Histogram, double...)} of {@code interval}, the histogram the last
     * {@link #getIntervalHistogram} returned, from the buckets that call folded (no walk over the histogram).
     */
    Percentiles.Pass intervalPercentiles(Histogram interval, double... percentiles) {
        return foldedComplete
                ? Percentiles.valuesAndMean(interval, foldedLowestValues, foldedCounts, foldedCount, percentiles)
                : Percentiles.valuesAndMean(interval, percentiles);
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
}
