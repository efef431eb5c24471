package dev.infertop.model;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class PercentilesTest {
    private static final double[] PLOT = LatencyDistribution.PLOT_PERCENTILES;

    /** Token latencies in ns, spread over several orders of magnitude like TTFT and TPOT. */
    private static Histogram latencies(int count, long seed) {
        Histogram histogram = new Histogram(3);
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < count; i++) {
            histogram.recordValue((long) Math.exp(random.nextDouble(Math.log(50_000), Math.log(2e9))));
        }
        return histogram;
    }

    @Test
    void onePassGivesHdrHistogramsOwnPercentilesAndMean() {
        for (long seed = 1; seed <= 5; seed++) {
            Histogram histogram = latencies(10_000, seed);
            Percentiles.Pass pass = Percentiles.valuesAndMean(histogram, PLOT);
            for (int i = 0; i < PLOT.length; i++) {
                if (PLOT[i] > 0) { // p0 is the first bucket's highest value here; views show getMinValue() there
                    assertEquals(histogram.getValueAtPercentile(PLOT[i]), pass.values()[i], "seed " + seed + " p" + PLOT[i]);
                }
            }
            assertArrayEquals(Percentiles.valuesAt(histogram, PLOT), pass.values(), "seed " + seed);
            assertEquals(histogram.getMean(), pass.mean(), 0.0, "the same sum in the same order: equal, not close");
        }
    }

    /** A narrow band far from 0 (the scan starts at the lowest value), zeros recorded, and 2-digit histograms. */
    @Test
    void narrowBandsZerosAndTwoDigitHistogramsMatchHdrHistogram() {
        SplittableRandom random = new SplittableRandom(7);
        for (int digits = 2; digits <= 3; digits++) {
            Histogram tpot = new Histogram(digits);
            Histogram withZeros = new Histogram(digits);
            for (int i = 0; i < 5_000; i++) {
                long ns = 12_000_000 + random.nextLong(9_000_000); // 12-21 ms, like decode steps
                tpot.recordValue(ns);
                withZeros.recordValue(i % 10 == 0 ? 0 : ns);
            }
            for (Histogram histogram : new Histogram[] {tpot, withZeros}) {
                Percentiles.Pass pass = Percentiles.valuesAndMean(histogram, PLOT);
                for (int i = 0; i < PLOT.length; i++) {
                    if (PLOT[i] > 0) {
                        assertEquals(histogram.getValueAtPercentile(PLOT[i]), pass.values()[i], digits + " digits p" + PLOT[i]);
                    }
                }
                assertEquals(histogram.getMean(), pass.mean(), 0.0);
                assertArrayEquals(Percentiles.valuesAt(histogram, PLOT), pass.values());
            }
            assertEquals(0, Percentiles.valuesAt(withZeros, 5)[0], "10 % zeros: p5 is 0");
        }
    }

    @Test
    void exactNumbersOnAHandMadeHistogram() {
        Histogram histogram = new Histogram(3);
        histogram.recordValue(100);  // below 2048 every value is its own bucket: exact
        histogram.recordValue(200);
        histogram.recordValue(300);
        histogram.recordValue(1000);
        Percentiles.Pass pass = Percentiles.valuesAndMean(histogram, 25, 50, 75, 100);
        assertArrayEquals(new long[] {100, 200, 300, 1000}, pass.values());
        assertEquals(400.0, pass.mean(), 0.0); // (100 + 200 + 300 + 1000) / 4
    }

    @Test
    void anEmptyHistogramGivesZeros() {
        Percentiles.Pass pass = Percentiles.valuesAndMean(new Histogram(3), 50, 99);
        assertArrayEquals(new long[] {0, 0}, pass.values());
        assertEquals(0.0, pass.mean(), 0.0);
    }
}
