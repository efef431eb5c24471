package dev.infertop.agg;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

class IntervalRecorderTest {
    @Test
    void eachIntervalHoldsExactlyTheValuesRecordedSinceTheLastOne() {
        IntervalRecorder recorder = new IntervalRecorder(2);
        for (int i = 1; i <= 1000; i++) {
            recorder.recordValue(i);
        }
        Histogram first = recorder.getIntervalHistogram(null);
        assertEquals(1000, first.getTotalCount());
        assertEquals(1000, first.getMaxValue(), 1000 * 0.01);
        recorder.recordValue(5_000);
        recorder.recordValue(7_000);
        Histogram second = recorder.getIntervalHistogram(null);
        assertNotSame(first, second);
        assertEquals(2, second.getTotalCount());
        assertEquals(1000, first.getTotalCount(), "an interval taken is not touched by later values");
        // Recycling the first: it is emptied and records the next interval.
        recorder.recordValue(42);
        Histogram third = recorder.getIntervalHistogram(first);
        assertEquals(1, third.getTotalCount());
        assertEquals(42, third.getMinValue());
        Histogram fourth = recorder.getIntervalHistogram(second);
        assertEquals(0, fourth.getTotalCount());
        assertSame(first, fourth, "the histogram given back records the interval after the one it was given for");
    }

    /**
     * The recorder counts values in its own array and folds them into the histogram per interval: the result
     * must be the histogram recording every value directly gives, bucket for bucket, on values around every
     * bucket edge (powers of two, the sub-bucket count) and across the whole range, for 1 to 3 digits.
     */
    @Test
    void anIntervalIsTheHistogramRecordingEachValueDirectlyGives() {
        for (int digits = 1; digits <= 3; digits++) {
            List<Long> values = new ArrayList<>();
            for (long v = 0; v < 5000; v++) {
                values.add(v);
            }
            for (int bit = 1; bit < 53; bit++) {
                for (long d = -3; d <= 3; d++) {
                    long v = (1L << bit) + d;
                    if (v >= 0) values.add(v);
                }
            }
            SplittableRandom random = new SplittableRandom(digits);
            for (int i = 0; i < 200_000; i++) {
                values.add(random.nextLong(1L << random.nextInt(1, 54)));
            }
            IntervalRecorder recorder = new IntervalRecorder(digits);
            Histogram direct = new Histogram(digits);
            for (long v : values) {
                recorder.recordValue(v);
                direct.recordValue(v);
            }
            Histogram folded = recorder.getIntervalHistogram(null);
            assertEquals(direct, folded, digits + " digits");
            assertEquals(direct.getTotalCount(), folded.getTotalCount());
            assertEquals(direct.getMinNonZeroValue(), folded.getMinNonZeroValue());
            assertEquals(direct.getMaxValue(), folded.getMaxValue());
            assertEquals(direct.getMean(), folded.getMean(), 1e-9 * direct.getMean());
            double[] percentiles = {1, 25, 50, 90, 99, 99.9, 100};
            long[] expected = new long[percentiles.length];
            long[] actual = new long[percentiles.length];
            for (int i = 0; i < percentiles.length; i++) {
                expected[i] = direct.getValueAtPercentile(percentiles[i]);
                actual[i] = folded.getValueAtPercentile(percentiles[i]);
            }
            assertArrayEquals(expected, actual, digits + " digits");
            // Its percentiles from the folded buckets: those of a walk over the histogram.
            double[] plot = dev.infertop.model.LatencyDistribution.PLOT_PERCENTILES;
            dev.infertop.model.Percentiles.Pass walked = dev.infertop.model.Percentiles.valuesAndMean(folded, plot);
            dev.infertop.model.Percentiles.Pass fromBuckets = recorder.intervalPercentiles(folded, plot);
            assertArrayEquals(walked.values(), fromBuckets.values(), digits + " digits");
            assertEquals(walked.mean(), fromBuckets.mean(), 0.0, "the same sum in the same order");
            // Added to a run's total: as the histogram added.
            Histogram total = new Histogram(digits);
            total.recordValue(12345);
            Histogram expectedTotal = total.copy();
            expectedTotal.add(folded);
            recorder.addInterval(folded, total);
            assertEquals(expectedTotal, total);
            assertEquals(expectedTotal.getMaxValue(), total.getMaxValue());
            // The next interval starts empty: the fold cleared what it counted.
            recorder.recordValue(300);
            Histogram next = recorder.getIntervalHistogram(folded);
            assertEquals(1, next.getTotalCount());
            assertEquals(direct.lowestEquivalentValue(300), next.getMinValue());
        }
    }

    /**
     * The run's percentiles from the buckets of its intervals, added one by one (a new bucket now and then,
     * most already counted): those of a walk over the run's histogram, after each interval.
     */
    @Test
    void theRunsPercentilesFromItsBucketsAreThoseOfTheHistogram() {
        double[] plot = dev.infertop.model.LatencyDistribution.PLOT_PERCENTILES;
        SplittableRandom random = new SplittableRandom(11);
        IntervalRecorder recorder = new IntervalRecorder(2);
        Histogram total = new Histogram(2);
        Histogram interval = null;
        for (int tick = 0; tick < 40; tick++) {
            int values = tick == 3 ? 0 : random.nextInt(1, 2_000); // an empty interval too
            for (int i = 0; i < values; i++) {
                // op times: mostly a band around 40 µs, now and then far out (1 µs .. 50 ms)
                long ns = random.nextInt(10) == 0 ? random.nextLong(1_000, 50_000_000)
                        : 40_000 + random.nextLong(tick * 1_000L + 1);
                recorder.recordValue(ns);
            }
            interval = recorder.getIntervalHistogram(interval);
            recorder.addInterval(interval, total);
            dev.infertop.model.Percentiles.Pass walked = dev.infertop.model.Percentiles.valuesAndMean(total, plot);
            dev.infertop.model.Percentiles.Pass fromBuckets = recorder.totalPercentiles(total, plot);
            assertArrayEquals(walked.values(), fromBuckets.values(), "tick " + tick);
            assertEquals(walked.mean(), fromBuckets.mean(), 0.0, "tick " + tick);
            assertArrayEquals(dev.infertop.model.Percentiles.valuesAndMean(interval, plot).values(),
                    recorder.intervalPercentiles(interval, plot).values(), "tick " + tick);
        }
        // A value out of the fast path's range: from then on the run's percentiles come from a walk, still right.
        recorder.recordValue(1L << 55);
        interval = recorder.getIntervalHistogram(interval);
        recorder.addInterval(interval, total);
        assertArrayEquals(dev.infertop.model.Percentiles.valuesAndMean(total, plot).values(),
                recorder.totalPercentiles(total, plot).values());
    }

    /** Values from 2^53 up (not exact as doubles) go to the histogram directly; percentiles still count them. */
    @Test
    void hugeValuesAreRecordedDirectlyAndStillCounted() {
        IntervalRecorder recorder = new IntervalRecorder(2);
        Histogram direct = new Histogram(2);
        for (long v : new long[] {5, 1_000, 1_000_000, 1L << 53, (1L << 60) + 12345}) {
            recorder.recordValue(v);
            direct.recordValue(v);
        }
        Histogram folded = recorder.getIntervalHistogram(null);
        assertEquals(direct, folded);
        double[] plot = dev.infertop.model.LatencyDistribution.PLOT_PERCENTILES;
        assertArrayEquals(dev.infertop.model.Percentiles.valuesAndMean(direct, plot).values(),
                recorder.intervalPercentiles(folded, plot).values());
    }
}
