package dev.infertop.model;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MoeMathTest {
    @Test
    void coefficientOfVariationIsPopulationStddevOverMean() {
        assertEquals(0.5, MoeMath.coefficientOfVariation(new long[] {1, 3}), 1e-12); // mean 2, sd 1
        assertEquals(0.0, MoeMath.coefficientOfVariation(new long[] {5, 5, 5}), 1e-12);
        assertEquals(Math.sqrt(3), MoeMath.coefficientOfVariation(new long[] {4, 0, 0, 0}), 1e-12); // one of four takes all
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population sd 2
        assertEquals(0.4, MoeMath.coefficientOfVariation(new long[] {2, 4, 4, 4, 5, 5, 7, 9}), 1e-12);
        assertTrue(Double.isNaN(MoeMath.coefficientOfVariation(new long[] {0, 0})));
        assertTrue(Double.isNaN(MoeMath.coefficientOfVariation(new long[0])));
    }
}
