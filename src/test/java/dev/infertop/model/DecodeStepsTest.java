package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DecodeStepsTest {
    private static final Roofline.Ceilings CEILINGS = new Roofline.Ceilings(10e9, 25e9); // ridge 2.5 FLOP/B

    /**
     * 10 steps of 4 tokens, each reading 400 MB of weights and 40 MB of KV (1,000 positions × 40 kB) and doing
     * 1.6 GFLOP, in 2 s: 110 MB per token, 1.6e9 / 440e6 = 3.64 FLOP/B, bound 10 GB/s / 110 MB = 90.9 tok/s,
     * measured 40 / 2 s = 20 tok/s.
     */
    @Test
    void stepFiguresPerTokenAndTheBoundAtTheirBatchSize() {
        DecodeSteps four = new DecodeSteps(4, 10, 40, 4_000_000_000L, 400_000_000L, 10_000, 16_000_000_000L,
                2_000_000_000L);
        assertEquals(400e6, four.weightBytesPerStep(), 1e-6);
        assertEquals(40e6, four.kvBytesPerStep(), 1e-6);
        assertEquals(110e6, four.bytesPerToken(), 1e-6);
        assertEquals(16e9 / 4.4e9, four.flopsPerByte(), 1e-12);
        assertEquals(10e9 / 110e6, four.boundTokensPerSecond(CEILINGS), 1e-9);
        assertEquals(20.0, four.measuredTokensPerSecond(), 1e-12);
    }

    /**
     * Per token 400 MFLOP and 10 MB of KV, 400 MB of weights a step: intensity b·400e6 / (400e6 + b·10e6) reaches
     * the ridge 2.5 at b = 2.5 × 400e6 / (400e6 − 2.5 × 10e6) = 2.667 slots; KV reads pass the weights past
     * 400e6 / 40e3 = 10,000 positions a step.
     */
    @Test
    void theRidgeIsReachedAtABatchAndKvOvertakesTheWeightsAtAContext() {
        DecodeSteps four = new DecodeSteps(4, 10, 40, 4_000_000_000L, 400_000_000L, 10_000, 16_000_000_000L,
                2_000_000_000L);
        RooflineTotals totals = new RooflineTotals(List.of(), 0, 0, 0, 0, 0, CEILINGS, List.of(four), 40_000);
        assertEquals(2.5 * 400e6 / (400e6 - 2.5 * 10e6), totals.ridgeBatchTokens(), 1e-9);
        assertEquals(10_000, totals.kvOvertakesWeightsAtPositions());
        RooflineTotals kvBound = new RooflineTotals(List.of(), 0, 0, 0, 0, 0, CEILINGS, List.of(new DecodeSteps(4, 1,
                4, 1, 8_000_000_000L, 200_000, 16_000_000_000L, 1)), 40_000);
        assertEquals(Double.POSITIVE_INFINITY, kvBound.ridgeBatchTokens(), "KV bytes alone keep it below the ridge");
    }
}
