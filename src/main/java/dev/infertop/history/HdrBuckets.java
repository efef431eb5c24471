package dev.infertop.history;

/**
 * HdrHistogram's buckets for a histogram of some significant digits (lowest discernible value 1), numbered in
 * value order: the bucket of a value, and the values a bucket stands for. Worked out from the bits of the value as
 * a double (its exponent is the octave, its top mantissa bits the sub-bucket), which C1 compiles to a few
 * instructions where HdrHistogram's own index arithmetic is a chain of calls. The collector counts in these
 * buckets ({@code agg.IntervalRecorder}) and the histogram log keeps intervals as them ({@link IntervalHistograms}):
 * a histogram is built from them only when one is read.
 *
 * <p>Values must be below 2^53 (exact as doubles).
 */
public final class HdrBuckets {
    private final int significantDigits;
    /** log2 of HdrHistogram's sub-bucket count: values below 2^this are a bucket each. */
    private final int subBucketBits;
    /** Buckets per octave above that, as mantissa bits: log2 of the sub-bucket half count. */
    private final int octaveBits;

    public HdrBuckets(int significantDigits) {
        if (significantDigits < 0 || significantDigits > 5) {
            throw new IllegalArgumentException("significant digits must be 0..5, got " + significantDigits);
        }
        this.significantDigits = significantDigits;
        // As HdrHistogram sizes its sub-buckets (lowest discernible value 1): 2·10^digits, to a power of two.
        long largestWithUnitResolution = 2 * (long) Math.pow(10, significantDigits);
        this.subBucketBits = Math.max(1, 64 - Long.numberOfLeadingZeros(largestWithUnitResolution - 1));
        this.octaveBits = subBucketBits - 1;
    }

    public int significantDigits() {
        return significantDigits;
    }

    /** The bucket of {@code value} (0 ≤ value < 2^53). */
    public int bucketOf(long value) {
        if (value < 1L << subBucketBits) {
            return (int) value;
        }
        long bits = Double.doubleToRawLongBits((double) value);
        int octave = (int) (bits >>> 52) - 1023;
        int step = (int) (bits >>> (52 - octaveBits)) & ((1 << octaveBits) - 1);
        return (1 << subBucketBits) + ((octave - subBucketBits) << octaveBits) + step;
    }

    /** The lowest value of {@code bucket}: every value counted in it is equivalent to this one. */
    public long lowestValueOf(int bucket) {
        if (bucket < 1 << subBucketBits) {
            return bucket;
        }
        int above = bucket - (1 << subBucketBits);
        int octave = (above >>> octaveBits) + subBucketBits;
        long step = above & ((1 << octaveBits) - 1);
        return (1L << octave) | (step << (octave - octaveBits));
    }

    /** How many values {@code bucket} spans (HdrHistogram's sizeOfEquivalentValueRange). */
    public long widthOf(int bucket) {
        if (bucket < 1 << subBucketBits) {
            return 1;
        }
        int octave = ((bucket - (1 << subBucketBits)) >>> octaveBits) + subBucketBits;
        return 1L << (octave - octaveBits);
    }

    /** The highest value equivalent to {@code bucket}'s: what HdrHistogram's getMaxValue says of it. */
    public long highestValueOf(int bucket) {
        return lowestValueOf(bucket) + widthOf(bucket) - 1;
    }
}
