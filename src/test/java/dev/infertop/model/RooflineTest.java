package dev.infertop.model;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Node costs from shapes and the verdict against ceilings, on figures worked out by hand. */
class RooflineTest {
    private static final Roofline.Ceilings MACHINE = new Roofline.Ceilings(20e9, 80e9); // ridge 4 FLOP/byte

    @Test
    void aDecodeMatmulOfQ4_0WeightsCostsItsBlocksAndTwoFlopsPerWeight() {
        // 4096x4096 Q4_0 weight (18 bytes per 32 values), one token: K=4096, M=4096, N=1.
        long rowBytes = 4096 / 32 * 18;
        NodeCost cost = NodeCost.mulMat(4096, 4096, 1, 1, 1, rowBytes, 4);
        assertEquals(4096L * 2304, cost.weightBytes());
        assertEquals(4096 * 4 + 4096 * 4, cost.activationBytes());
        assertEquals(2L * 4096 * 4096, cost.flops());
    }

    @Test
    void aWeightStreamingAtMostOfTheMemoryCeilingIsMemoryBound() {
        // 9.4 MB in 0.6 ms = 15.7 GB/s (79 % of 20), 33.5 MFLOP: 3.6 FLOP/byte < ridge 4.
        Roofline.Point p = Roofline.point(9_437_184, 33_554_432, 600_000, MACHINE);
        assertEquals(Roofline.Bound.MEMORY, p.bound(), p.describe());
        assertEquals(0.786, p.memoryShare(), 0.001);
    }

    @Test
    void aPrefillMatmulNearTheComputeCeilingIsComputeBound() {
        // 512 tokens on the same weight: 17.2 GFLOP in 0.3 s = 57 GFLOP/s (72 % of 80), intensity far above 4.
        Roofline.Point p = Roofline.point(9_437_184 + 16_000_000, 17_179_869_184L, 300_000_000, MACHINE);
        assertEquals(Roofline.Bound.COMPUTE, p.bound(), p.describe());
    }

    @Test
    void slowWorkNearNeitherCeilingIsNeither() {
        // The same decode matmul taking 5 ms: 1.9 GB/s, 6.7 GFLOP/s.
        Roofline.Point p = Roofline.point(9_437_184, 33_554_432, 5_000_000, MACHINE);
        assertEquals(Roofline.Bound.NEITHER, p.bound(), p.describe());
        assertEquals("neither: look at threads, barriers and interference", p.bound().text());
    }

    @Test
    void theDecodeBoundIsTheMemoryCeilingOverTheWeightBytesPerToken() {
        assertEquals(40.0, Roofline.decodeBoundTokensPerSecond(500_000_000L, MACHINE), 1e-9);
    }
}
