package dev.infertop.agg;

import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.Percentiles;
import dev.infertop.history.IntervalHistograms;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class IntervalRecorderTest {
    /** Closes the interval and builds it as a histogram in {@code recycle}, as the histogram log does. */
    /** Closes the interval and reads it back as the histogram log keeps it (an empty one is not kept). */
    private static Histogram closeAndBuild(IntervalRecorder recorder) {
        recorder.closeInterval();
        IntervalHistograms log = new IntervalHistograms(10);
        recorder.logInterval(log, "t");
        var kept = log.copy().get("t");
        if (kept == null) {
            return new Histogram(2);
        }
        assertEquals(1, kept.size());
        Histogram histogram = kept.getFirst().decode();
        assertEquals(histogram.getMaxValue(), kept.getFirst().maxValue(), "the max kept beside the buckets");
        return histogram;
    }

    @Test
    void eachIntervalHoldsExactlyTheValuesRecordedSinceTheLastOne() {
        IntervalRecorder recorder = new IntervalRecorder(2);
        for (int i = 1; i <= 1000; i++) {
            recorder.recordValue(i);
        }
        Histogram first = closeAndBuild(recorder);
        assertEquals(1000, first.getTotalCount());
        assertEquals(1000, first.getMaxValue(), 1000 * 0.01);
        recorder.recordValue(5_000);
        recorder.recordValue(7_000);
        Histogram second = closeAndBuild(recorder);
        assertEquals(2, second.getTotalCount());
        assertEquals(1000, first.getTotalCount(), "an interval taken is not touched by later values");
        recorder.recordValue(42);
        Histogram third = closeAndBuild(recorder);
        assertEquals(1, third.getTotalCount());
        assertEquals(42, third.getMinValue());
        Histogram fourth = closeAndBuild(recorder);
        assertEquals(0, fourth.getTotalCount());
        assertEquals(1003, recorder.totalCount(), "the run holds every closed interval");
        assertEquals(1003, recorder.totalHistogram().getTotalCount());
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
            recorder.recordValue(12345); // an interval before: the run's figures hold both
            recorder.closeInterval();
            Histogram direct = new Histogram(digits);
            for (long v : values) {
                recorder.recordValue(v);
                direct.recordValue(v);
            }
            Histogram folded = closeAndBuild(recorder);
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
            double[] plot = LatencyDistribution.PLOT_PERCENTILES;
            Percentiles.Pass walked = Percentiles.valuesAndMean(folded, plot);
            Percentiles.Pass fromBuckets = recorder.intervalPercentiles(plot);
            assertArrayEquals(walked.values(), fromBuckets.values(), digits + " digits");
            assertEquals(walked.mean(), fromBuckets.mean(), 0.0, "the same sum in the same order");
            assertEquals(direct.getTotalCount(), recorder.intervalCount());
            assertEquals(direct.getMinValue(), recorder.intervalMin());
            assertEquals(direct.getMaxValue(), recorder.intervalMax());
            // The run's: the interval before and this one, as the histogram of both.
            Histogram expectedTotal = new Histogram(digits);
            expectedTotal.recordValue(12345);
            expectedTotal.add(direct);
            Histogram total = recorder.totalHistogram();
            assertEquals(expectedTotal, total);
            assertEquals(expectedTotal.getTotalCount(), recorder.totalCount());
            assertEquals(expectedTotal.getMinValue(), recorder.totalMin());
            assertEquals(expectedTotal.getMaxValue(), recorder.totalMax());
            assertArrayEquals(Percentiles.valuesAndMean(expectedTotal, plot).values(),
                    recorder.totalPercentiles(plot).values(), digits + " digits");
            // The summaries (p50, p90, p99, max, mean in ms): what the histograms' say.
            assertEquals(LatencySummary.ofNanos(direct), recorder.intervalSummary());
            assertEquals(LatencySummary.ofNanos(expectedTotal), recorder.totalSummary());
            // The next interval starts empty: the close cleared what it counted.
            recorder.recordValue(300);
            Histogram next = closeAndBuild(recorder);
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
        double[] plot = LatencyDistribution.PLOT_PERCENTILES;
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
                total.recordValue(ns);
            }
            interval = closeAndBuild(recorder);
            Percentiles.Pass walked = Percentiles.valuesAndMean(total, plot);
            Percentiles.Pass fromBuckets = recorder.totalPercentiles(plot);
            assertArrayEquals(walked.values(), fromBuckets.values(), "tick " + tick);
            assertEquals(walked.mean(), fromBuckets.mean(), 0.0, "tick " + tick);
            assertEquals(total.getMaxValue(), recorder.totalMax(), "tick " + tick);
            assertEquals(total, recorder.totalHistogram(), "tick " + tick);
            assertEquals(LatencySummary.ofNanos(total), recorder.totalSummary(), "tick " + tick);
            assertEquals(LatencySummary.ofNanos(interval), recorder.intervalSummary(),
                    "tick " + tick);
            assertArrayEquals(Percentiles.valuesAndMean(interval, plot).values(),
                    recorder.intervalPercentiles(plot).values(), "tick " + tick);
        }
    }

    /**
     * The run's percentiles come from a tree of its counts and its mean from an exact sum while that sum is
     * below 2^53; past it, from the walk in value order: the histogram's figures either way, the tree grown
     * as values reach new octaves.
     */
    @Test
    void theRunsFiguresStayTheHistogramsWhenItsSumPassesTwoToThe53() {
        double[] plot = LatencyDistribution.PLOT_PERCENTILES;
        IntervalRecorder recorder = new IntervalRecorder(3);
        Histogram total = new Histogram(3);
        long[][] ticks = {{7}, {40_000, 41_000, 39_500}, {3_000_000_000L}, {1L << 40, 5}, {1L << 52}, {1L << 52, 9},
                {123_456}};
        for (int tick = 0; tick < ticks.length; tick++) {
            for (long ns : ticks[tick]) {
                recorder.recordValue(ns);
                total.recordValue(ns);
            }
            recorder.closeInterval();
            Percentiles.Pass walked = Percentiles.valuesAndMean(total, plot);
            Percentiles.Pass fromRecorder = recorder.totalPercentiles(plot);
            assertArrayEquals(walked.values(), fromRecorder.values(), "tick " + tick);
            assertEquals(walked.mean(), fromRecorder.mean(), 0.0, "tick " + tick);
            assertArrayEquals(recorder.walkTotal(plot).values(), fromRecorder.values(), "tick " + tick);
        }
    }

    /** Values from 2^53 up (104 days in ns; not exact as doubles) are counted as 2^53 - 1; negatives refused. */
    @Test
    void hugeValuesAreCountedAsTheLargestExactOneAndNegativesRefused() {
        IntervalRecorder recorder = new IntervalRecorder(2);
        Histogram expected = new Histogram(2);
        for (long v : new long[] {5, 1_000, 1_000_000, 1L << 53, (1L << 60) + 12345}) {
            recorder.recordValue(v);
            expected.recordValue(Math.min(v, IntervalRecorder.LARGEST_COUNTED));
        }
        Histogram folded = closeAndBuild(recorder);
        assertEquals(expected, folded);
        assertEquals(5, recorder.intervalCount());
        double[] plot = LatencyDistribution.PLOT_PERCENTILES;
        assertArrayEquals(Percentiles.valuesAndMean(expected, plot).values(),
                recorder.intervalPercentiles(plot).values());
        assertThrows(IllegalArgumentException.class, () -> recorder.recordValue(-1));
    }
}
