package dev.infertop.diff;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Mann-Whitney U test and Holm's adjustment against numbers worked out by hand. */
class RankTestTest {
    @Test
    void uCountsAreTheArrangementsOfEachU() {
        // 3 and 3: C(6,3) = 20 arrangements, U from 0 to 9, symmetric.
        assertArrayEquals(new double[] {1, 1, 2, 3, 3, 3, 3, 2, 1, 1}, RankTest.uCounts(3, 3));
        assertArrayEquals(new double[] {1, 1, 1, 1}, RankTest.uCounts(1, 3));
        double total = 0;
        for (double count : RankTest.uCounts(10, 10)) {
            total += count;
        }
        assertEquals(184756, total, 0); // C(20,10)
    }

    @Test
    void separatedSamplesGetTheSmallestExactP() {
        RankTest.Result three = RankTest.test(new double[] {1, 2, 3}, new double[] {4, 5, 6});
        assertEquals(0, three.u());
        assertEquals(0.1, three.p(), 1e-12); // 2 × 1/20
        assertTrue(three.exact());
        RankTest.Result five = RankTest.test(new double[] {6, 7, 8, 9, 10}, new double[] {1, 2, 3, 4, 5});
        assertEquals(25, five.u());
        assertEquals(2.0 / 252, five.p(), 1e-12);
    }

    @Test
    void interleavedSamplesAreFarFromSignificant() {
        RankTest.Result result = RankTest.test(new double[] {1, 3, 5}, new double[] {2, 4, 6});
        assertEquals(3, result.u()); // 3>2, 5>2, 5>4
        assertEquals(0.7, result.p(), 1e-12); // 2 × P(U <= 3) = 2 × 7/20
    }

    @Test
    void tiesUseTheNormalApproximationWithTheTieCorrection() {
        // ranks 1.5 1.5 3.5 | 3.5 5.5 5.5: U = 6.5 − 6 = 0.5, mean 4.5, variance 9/12 × (7 − 18/30) = 4.8
        RankTest.Result result = RankTest.test(new double[] {1, 1, 2}, new double[] {2, 3, 3});
        assertEquals(0.5, result.u());
        assertFalse(result.exact());
        assertEquals(0.1101489, result.p(), 1e-6); // 2 × (1 − Φ((4 − 0.5)/√4.8))
    }

    @Test
    void anEmptyOrConstantSampleIsNeverSignificant() {
        assertEquals(1, RankTest.test(new double[0], new double[] {1, 2}).p());
        assertEquals(1, RankTest.test(new double[] {2, 2}, new double[] {2, 2, 2}).p());
    }

    @Test
    void theNormalTailMatchesTheTable() {
        assertEquals(0.5, RankTest.upperNormalTail(0), 1e-7);
        assertEquals(0.0249979, RankTest.upperNormalTail(1.96), 1e-6);
        assertEquals(0.9750021, RankTest.upperNormalTail(-1.96), 1e-6);
    }

    @Test
    void holmMultipliesBySmallerAndSmallerCountsAndKeepsTheOrder() {
        // 0.01 × 3 = 0.03; 0.03 × 2 = 0.06; 0.04 × 1 = 0.04, raised to 0.06 (never below an earlier one)
        double[] adjusted = RankTest.holm(new double[] {0.01, 0.04, 0.03, Double.NaN});
        assertEquals(0.03, adjusted[0], 1e-12);
        assertEquals(0.06, adjusted[1], 1e-12);
        assertEquals(0.06, adjusted[2], 1e-12);
        assertTrue(Double.isNaN(adjusted[3]));
        assertEquals(1, RankTest.holm(new double[] {0.6, 0.7})[0], 1e-12); // capped at 1
    }

    @Test
    void theSmallestPIsThatOfSamplesWhollyApart() {
        assertEquals(0.1, RankTest.minimumP(3, 3), 1e-15); // 2 / C(6,3) = 2/20: a 5 % test cannot be passed
        assertEquals(2.0 / 70, RankTest.minimumP(4, 4), 1e-15); // 0.0286
        assertEquals(2.0 / 252, RankTest.minimumP(5, 5), 1e-15);
        assertEquals(2.0 / 924, RankTest.minimumP(6, 6), 1e-15);
        assertEquals(2.0 / 120, RankTest.minimumP(3, 7), 1e-15); // C(10,3)
        assertEquals(0.5, RankTest.minimumP(1, 3), 1e-15);
        assertEquals(1, RankTest.minimumP(0, 3));
        assertEquals(1, RankTest.minimumP(1, 1)); // 2 × 1/2
        // What the test itself gives two samples wholly apart, exact and approximated.
        double[] four = {1, 2, 3, 4};
        double[] fourAbove = {5, 6, 7, 8};
        assertEquals(RankTest.test(four, fourAbove).p(), RankTest.minimumP(4, 4), 1e-15);
        double[] low = new double[60];
        double[] high = new double[60];
        for (int i = 0; i < 60; i++) {
            low[i] = i;
            high[i] = 100 + i;
        }
        assertFalse(RankTest.test(low, high).exact());
        assertEquals(RankTest.test(low, high).p(), RankTest.minimumP(60, 60), 1e-20);
    }

    @Test
    void theFewestSamplesASideThatHolmCanCall() {
        assertEquals(4, RankTest.leastPerSide(1, 0.05, 50)); // 3: 0.1; 4: 0.0286
        assertEquals(5, RankTest.leastPerSide(3, 0.05, 50)); // 4: 3 × 0.0286 = 0.086; 5: 3 × 0.0079 = 0.024
        assertEquals(6, RankTest.leastPerSide(9, 0.05, 50)); // 5: 0.071; 6: 9 × 0.00216 = 0.019
        assertEquals(7, RankTest.leastPerSide(24, 0.05, 50)); // 6: 24 × 0.00216 = 0.052
        assertEquals(3, RankTest.leastPerSide(1, 0.05, 2), "none up to the maximum: one more than it");
    }
}
