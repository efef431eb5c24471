package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.target.layout.TensorHeaders;
import dev.infertop.target.layout.TypeTable;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A two-matmul decode graph (one Q4_0 weight, one F16 weight, the KV cache's view as a non-weight source) on one
 * thread: bytes and FLOPs per op over the groups' wall time, weight bytes per decode token, sources read once.
 */
class RooflineAggregatorTest {
    private static final int MUL_MAT = 1;
    private static final int ADD = 2;
    private static final long Q4_WEIGHT = 0x1000;
    private static final long F16_WEIGHT = 0x2000;
    private static final long KV_VIEW = 0x3000;
    private final TypeTable types = new TypeTable(List.of("f32", "f16", "q4_0"), List.of(
            new TypeTable.BlockSize(4, 1), new TypeTable.BlockSize(2, 1), new TypeTable.BlockSize(18, 32)));
    private final Map<Long, RooflineAggregator.Source> memory = Map.of(
            Q4_WEIGHT, new RooflineAggregator.Source(new TensorHeaders.Header(2, 256, 512, 1, 1), true),
            F16_WEIGHT, new RooflineAggregator.Source(new TensorHeaders.Header(1, 512, 256, 1, 1), true),
            KV_VIEW, new RooflineAggregator.Source(new TensorHeaders.Header(1, 64, 32, 1, 1), false));
    private final List<Long> reads = new ArrayList<>();
    private final RooflineAggregator roofline = new RooflineAggregator(MUL_MAT, types, address -> {
        reads.add(address);
        return memory.get(address);
    }, new Roofline.Ceilings(20e9, 80e9));
    private final CpuGraphAssembler graphs = new CpuGraphAssembler(
            GraphFixture.naming(List.of("NONE", "MUL_MAT", "ADD"), 0, Set.of()));
    private final GraphFixture fixture = new GraphFixture(graphs);

    RooflineAggregatorTest() {
        graphs.addListener(roofline);
    }

    /** Graph {@code seq}: MUL_MAT(Q4 weight) | MUL_MAT(F16 weight) | MUL_MAT(KV view) | ADD, one group each. */
    private void decodeGraph(long seq, long startNs, long tokens) {
        fixture.node(seq, startNs, 0, 0x9000, MUL_MAT, 0, 512, tokens, 1, 1, Q4_WEIGHT, 0x8000, 0, -1)
                .node(seq, startNs, 1, 0x9001, MUL_MAT, 0, 256, tokens, 1, 1, F16_WEIGHT, 0x9000, 0, -1)
                .node(seq, startNs, 2, 0x9002, MUL_MAT, 0, 32, tokens, 1, 1, KV_VIEW, 0x9001, 0, -1)
                .node(seq, startNs, 3, 0x9003, ADD, 0, 256, tokens, 1, 1, 0x9001, 0x9002, 0, -1)
                .arrivals(7, seq, startNs, startNs + 1_000_000, startNs + 2_000_000, startNs + 2_500_000,
                        startNs + 2_600_000);
    }

    @Test
    void bytesFlopsAndWallPerOpAndTheWeightsOneDecodeTokenReads() {
        decodeGraph(1, 10_000_000, 1);
        decodeGraph(2, 20_000_000, 1);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        assertEquals(1, totals.ops().size(), totals.toString());
        RooflineTotals.OpRoofline mulMat = totals.ops().getFirst();
        assertEquals("MUL_MAT", mulMat.op());
        assertEquals(6, mulMat.nodes());
        long q4Weight = 512L * (256 / 32 * 18);
        long f16Weight = 256L * 512 * 2;
        long kv = 32L * 64 * 2;
        assertEquals(2 * (q4Weight + f16Weight), mulMat.weightBytes(), "weights only, not the KV cache's view");
        long activations = 4 * ((256 + 512) + (512 + 256) + (64 + 32));
        assertEquals(2 * (q4Weight + f16Weight + kv + activations), mulMat.bytes());
        assertEquals(2 * 2 * (256L * 512 + 512L * 256 + 64L * 32), mulMat.flops());
        assertEquals(2 * 2_500_000, mulMat.wallNs(), "the three MUL_MAT groups' wall time, twice");
        assertEquals(2, totals.decodeGraphs());
        assertEquals(q4Weight + f16Weight, totals.weightBytesPerDecodeToken());
        assertEquals(List.of(Q4_WEIGHT, F16_WEIGHT, KV_VIEW), reads, "each source read once");
        assertTrue(Roofline.decodeBoundTokensPerSecond(totals.weightBytesPerDecodeToken(), totals.ceilings()) > 0);
    }

    @Test
    void aPrefillGraphIsNoDecodeTokenAndIntervalsAreDerivedFromTheRun() {
        decodeGraph(1, 10_000_000, 1);
        fixture.finish();
        assertEquals(1, roofline.interval().decodeGraphs());
        decodeGraph(2, 20_000_000, 16);
        fixture.finish();
        RooflineTotals interval = roofline.interval();
        assertEquals(0, interval.decodeGraphs(), "16 tokens at once: a prompt, not a decode step");
        assertEquals(3, interval.ops().getFirst().nodes());
        assertEquals(2 * 16 * (256L * 512 + 512L * 256 + 64L * 32), interval.ops().getFirst().flops());
        assertEquals(6, roofline.totals().ops().getFirst().nodes());
    }

    @Test
    void aGraphWithAnUnreadableSourceLeavesTheWeightsPerTokenOfTheLastCompleteOne() {
        decodeGraph(1, 10_000_000, 1);
        fixture.finish();
        long complete = roofline.totals().weightBytesPerDecodeToken();
        // The target has exited: the next graph's weights cannot be read (none were cached: a new address).
        fixture.node(2, 20_000_000, 0, 0x9000, MUL_MAT, 0, 512, 1, 1, 1, Q4_WEIGHT, 0x8000, 0, -1)
                .node(2, 20_000_000, 1, 0x9001, MUL_MAT, 0, 256, 1, 1, 1, 0x7777, 0x9000, 0, -1)
                .arrivals(7, 2, 20_000_000, 21_000_000, 22_000_000);
        fixture.finish();
        assertEquals(2, roofline.totals().decodeGraphs());
        assertEquals(complete, roofline.totals().weightBytesPerDecodeToken(), "not the partial 0x7777-less sum");
    }
}
