package dev.infertop.history;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IntervalHistogramsTest {
    /** HdrBuckets numbers HdrHistogram's buckets: the same lowest value and width for every digits count. */
    @Test
    void bucketsAreHdrHistogramsForEveryDigitsCount() {
        SplittableRandom random = new SplittableRandom(5);
        for (int digits = 0; digits <= 5; digits++) {
            HdrBuckets buckets = new HdrBuckets(digits);
            Histogram histogram = new Histogram(digits);
            int previous = -1;
            for (int i = 0; i < 20_000; i++) {
                long value = i < 5_000 ? i : random.nextLong(1L << random.nextInt(1, 53));
                int bucket = buckets.bucketOf(value);
                assertEquals(histogram.lowestEquivalentValue(value), buckets.lowestValueOf(bucket), digits + ": " + value);
                assertEquals(histogram.highestEquivalentValue(value), buckets.highestValueOf(bucket),
                        digits + ": " + value);
                if (i < 5_000) {
                    assertTrue(bucket >= previous, "numbered in value order");
                    previous = bucket;
                }
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new HdrBuckets(6));
    }

    /** An interval kept as its buckets reads back as the histogram it was, time stamps and max included. */
    @Test
    void anIntervalKeptAsItsBucketsIsTheHistogramAgain() {
        SplittableRandom random = new SplittableRandom(7);
        for (int digits = 1; digits <= 3; digits++) {
            Histogram histogram = new Histogram(digits);
            for (int i = 0; i < 50_000; i++) {
                // op times: most around 40 µs, some far out (0 .. 2^40 ns), with large counts now and then
                long ns = random.nextInt(10) == 0 ? random.nextLong(1L << 40) : 40_000 + random.nextLong(5_000);
                histogram.recordValueWithCount(ns, random.nextInt(100) == 0 ? 1L << 33 : 1);
            }
            histogram.setStartTimeStamp(1_000);
            histogram.setEndTimeStamp(2_000);
            IntervalHistograms.Encoded encoded = IntervalHistograms.Encoded.of(histogram);
            Histogram decoded = encoded.decode();
            assertEquals(histogram, decoded, digits + " digits");
            assertEquals(histogram.getMaxValue(), encoded.maxValue());
            assertEquals(1_000, decoded.getStartTimeStamp());
            assertEquals(2_000, decoded.getEndTimeStamp());
            // No larger than HdrHistogram's own uncompressed encoding, which the log kept before.
            int hdrBytes = histogram.encodeIntoByteBuffer(ByteBuffer.allocate(histogram.getNeededByteBufferCapacity()));
            assertTrue(encoded.encoded().length <= hdrBytes, encoded.encoded().length + " bytes against " + hdrBytes);
        }
        Histogram empty = new Histogram(2);
        assertEquals(0, IntervalHistograms.Encoded.of(empty).decode().getTotalCount());
        assertThrows(IllegalArgumentException.class,
                () -> IntervalHistograms.Encoded.of(new Histogram(1_000, 1_000_000, 2)), "lowest discernible 1000");
    }

    /** Buckets given by a recorder are kept with the interval's span and read back as those buckets' histogram. */
    @Test
    void bucketsAddedAreKeptWithTheIntervalsSpan() {
        HdrBuckets buckets = new HdrBuckets(2);
        long[] values = {3, 250, 40_000, 41_000, 9_000_000}; // one bucket each
        long[] counts = {1, 2, 500, 7, 1};
        int[] numbers = new int[values.length + 1];
        Histogram expected = new Histogram(2);
        for (int i = 0; i < values.length; i++) {
            numbers[i] = buckets.bucketOf(values[i]);
            expected.recordValueWithCount(values[i], counts[i]);
        }
        IntervalHistograms log = new IntervalHistograms(10);
        log.beginInterval(5_000, 6_000);
        log.addBuckets("op:MUL_MAT", buckets, numbers, counts, values.length, expected.getMaxValue());
        log.addBuckets("op:ADD", buckets, numbers, counts, 0, 0); // nothing counted: not kept
        List<IntervalHistograms.Encoded> kept = log.copy().get("op:MUL_MAT");
        assertEquals(1, kept.size());
        assertEquals(List.of("op:MUL_MAT"), List.copyOf(log.copy().keySet()));
        Histogram decoded = kept.getFirst().decode();
        assertEquals(expected, decoded);
        assertEquals(5_000, kept.getFirst().startMs());
        assertEquals(6_000, kept.getFirst().endMs());
        assertEquals(expected.getMaxValue(), kept.getFirst().maxValue());
    }
}
