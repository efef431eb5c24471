package dev.infertop.agg;

import dev.infertop.model.DecodeSteps;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TypeTable;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Graphs built with the shared {@link GraphFixture} on one thread: a dense decode step (two weights, the KV
 * cache's view as a non-weight leaf, an ADD), an MoE block whose MUL_MAT_IDs read only the experts the routing
 * chose, and the data-moving ops (GET_ROWS, SET_ROWS, CPY) and a fused RMS_NORM+MUL: bytes, FLOPs and wall per
 * op, weight bytes per decode token, sources read once, and what is left uncosted rather than guessed.
 */
class RooflineAggregatorTest {
    private static final int MUL_MAT = 1;
    private static final int ADD = 2;
    private static final int MUL_MAT_ID = 3;
    private static final int GET_ROWS = 4;
    private static final int SET_ROWS = 5;
    private static final int CPY = 6;
    private static final int RMS_NORM = 7;
    private static final int MUL = 8;
    private static final int VIEW = 9;
    private static final int F32 = 0;
    private static final int F16 = 1;
    private static final int I32 = 3;

    private static final long Q4_WEIGHT = 0x1000;
    private static final long F16_WEIGHT = 0x2000;
    private static final long KV_VIEW = 0x3000;
    private static final long INPUT = 0x8000;
    private static final long ROUTER = 0x4000;
    private static final long GATE_EXPS = 0x4100;
    private static final long DOWN_EXPS = 0x4200;
    private static final long IDS = 0x4300;
    private static final long TOKEN_EMBD = 0x5000;
    private static final long TOKENS = 0x5100;
    private static final long NORM = 0x5200;
    private static final long CACHE = 0x5300;
    private static final long CACHE_ROWS = 0x5400;

    private final TypeTable types = new TypeTable(List.of("f32", "f16", "q4_0", "i32"), List.of(
            new TypeTable.BlockSize(4, 1), new TypeTable.BlockSize(2, 1), new TypeTable.BlockSize(18, 32),
            new TypeTable.BlockSize(4, 1)));
    private final Map<Long, RooflineAggregator.Source> memory = new HashMap<>(Map.of(
            Q4_WEIGHT, source(2, true, 256, 512, 1), F16_WEIGHT, source(F16, true, 512, 256, 1),
            KV_VIEW, source(F16, false, 256, 32, 1), INPUT, source(F32, false, 256, 1, 1),
            ROUTER, source(F16, true, 256, 8, 1), GATE_EXPS, source(F16, true, 256, 32, 8),
            DOWN_EXPS, source(F16, true, 32, 256, 8), IDS, source(I32, false, 2, 4, 1)));
    private final List<Long> reads = new ArrayList<>();
    /** The leaves each refresh read together. */
    private final List<List<Long>> batches = new ArrayList<>();
    /** The MoE layer's reads: graph seq → node group → rows per expert. */
    private final Map<Long, Map<Integer, long[]>> routing = new HashMap<>();
    private final RooflineAggregator roofline = new RooflineAggregator(
            GraphFixture.naming(List.of("NONE", "MUL_MAT", "ADD", "MUL_MAT_ID", "GET_ROWS", "SET_ROWS", "CPY",
                    "RMS_NORM", "MUL", "VIEW"), 0, Set.of(0, VIEW)), types, new RooflineAggregator.WeightSource() {
                @Override
                public RooflineAggregator.Source read(long address) {
                    reads.add(address);
                    return memory.get(address);
                }

                @Override
                public void readAll(long[] addresses, int count, RooflineAggregator.Source[] into) {
                    List<Long> batch = new ArrayList<>();
                    for (int i = 0; i < count; i++) {
                        batch.add(addresses[i]);
                        into[i] = read(addresses[i]);
                    }
                    batches.add(batch);
                }
            }, (seq, group) -> routing.getOrDefault(seq, Map.of()).get(group), new Roofline.Ceilings(20e9, 80e9));
    private final CpuGraphAssembler graphs = new CpuGraphAssembler(GraphFixture.naming(List.of("NONE", "MUL_MAT",
            "ADD", "MUL_MAT_ID", "GET_ROWS", "SET_ROWS", "CPY", "RMS_NORM", "MUL", "VIEW"), 0, Set.of(0, VIEW)));
    private final GraphFixture fixture = new GraphFixture(graphs);

    RooflineAggregatorTest() {
        graphs.addListener(roofline);
    }

    private static RooflineAggregator.Source source(int type, boolean weight, long ne0, long ne1, long ne2) {
        return new RooflineAggregator.Source(new TensorHeaders.Header(type, ne0, ne1, ne2, 1), weight);
    }

    private static RooflineTotals.OpRoofline op(RooflineTotals totals, String name) {
        return totals.ops().stream().filter(o -> o.op().equals(name)).findFirst().orElse(null);
    }

    /** Graph {@code seq}: MUL_MAT(Q4 weight) | MUL_MAT(F16 weight) | MUL_MAT(KV view) | ADD, one group each. */
    private void decodeGraph(long seq, long startNs, long tokens) {
        fixture.node(seq, startNs, 0, 0x9000, MUL_MAT, 0, 512, tokens, 1, 1, Q4_WEIGHT, INPUT, 0, -1)
                .node(seq, startNs, 1, 0x9001, MUL_MAT, 0, 256, tokens, 1, 1, F16_WEIGHT, 0x9000, 0, -1)
                .node(seq, startNs, 2, 0x9002, MUL_MAT, 0, 32, tokens, 1, 1, KV_VIEW, 0x9001, 0, -1)
                .node(seq, startNs, 3, 0x9003, ADD, 0, 256, tokens, 1, 1, 0x9001, INPUT, 0, -1)
                .arrivals(7, seq, startNs, startNs + 1_000_000, startNs + 2_000_000, startNs + 2_500_000,
                        startNs + 2_600_000);
    }

    @Test
    void bytesFlopsAndWallPerOpAndTheWeightsOneDecodeTokenReads() {
        decodeGraph(1, 10_000_000, 1);
        decodeGraph(2, 20_000_000, 1);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        assertEquals(List.of("MUL_MAT", "ADD"), totals.ops().stream().map(RooflineTotals.OpRoofline::op).toList());
        RooflineTotals.OpRoofline mulMat = op(totals, "MUL_MAT");
        assertEquals(6, mulMat.nodes());
        long q4Weight = 512L * (256 / 32 * 18);
        long f16Weight = 256L * 512 * 2;
        long kv = 32L * 256 * 2;
        assertEquals(2 * (q4Weight + f16Weight), mulMat.weightBytes(), "weights only, not the KV cache's view");
        long activations = 4 * ((256 + 512) + (512 + 256) + (256 + 32)); // each source read, each result written
        assertEquals(2 * (q4Weight + f16Weight + kv + activations), mulMat.bytes());
        assertEquals(2 * 2 * (256L * 512 + 512L * 256 + 256L * 32), mulMat.flops());
        assertEquals(2 * 2_500_000, mulMat.wallNs(), "the three MUL_MAT groups' wall time, twice");
        RooflineTotals.OpRoofline add = op(totals, "ADD");
        assertEquals(2 * 3 * 256 * 4, add.bytes(), "two F32 sources and the result");
        assertEquals(2 * 256, add.flops(), "one per element");
        assertEquals(2 * 100_000, add.wallNs());
        assertEquals(2, totals.decodeGraphs());
        assertEquals(q4Weight + f16Weight, totals.weightBytesPerDecodeToken());
        assertEquals(0, totals.expertWeightBytesPerDecodeToken());
        assertEquals(0, totals.uncostedNodes());
        assertEquals(List.of(Q4_WEIGHT, INPUT, F16_WEIGHT, KV_VIEW), reads, "leaves read once; nodes never read");
        assertTrue(Roofline.decodeBoundTokensPerSecond(totals.weightBytesPerDecodeToken(), totals.ceilings()) > 0);
    }

    @Test
    void weightsStayCachedAndOtherLeavesAreReadAgainEvery32Graphs() {
        for (int seq = 1; seq <= RooflineAggregator.REFRESH_GRAPHS + 1; seq++) {
            decodeGraph(seq, seq * 10_000_000L, 1);
        }
        fixture.finish();
        assertEquals(1, Collections.frequency(reads, Q4_WEIGHT));
        assertEquals(1, Collections.frequency(reads, F16_WEIGHT));
        assertEquals(2, Collections.frequency(reads, KV_VIEW), "the KV cache's view may change shape in place");
        assertEquals(2, Collections.frequency(reads, INPUT));
    }

    /**
     * llama.cpp's reused graph ("same graph" records, no node read again) adds what its first reading cost, group by
     * group, with each graph's own wall time, exactly as if every node were costed again.
     */
    @Test
    void aReusedGraphAddsTheSameCostsAsOneReadNodeByNode() {
        RooflineAggregator readEveryTime = new RooflineAggregator(GraphFixture.naming(List.of("NONE", "MUL_MAT",
                "ADD", "MUL_MAT_ID", "GET_ROWS", "SET_ROWS", "CPY", "RMS_NORM", "MUL", "VIEW"), 0, Set.of(0, VIEW)),
                types, memory::get, (seq, group) -> null, new Roofline.Ceilings(20e9, 80e9));
        CpuGraphAssembler everyNode = new CpuGraphAssembler(GraphFixture.naming(List.of("NONE", "MUL_MAT", "ADD",
                "MUL_MAT_ID", "GET_ROWS", "SET_ROWS", "CPY", "RMS_NORM", "MUL", "VIEW"), 0, Set.of(0, VIEW)));
        everyNode.addListener(readEveryTime);
        GraphFixture fresh = new GraphFixture(everyNode);
        decodeGraph(1, 10_000_000, 1);
        for (int seq = 2; seq <= 3 * RooflineAggregator.REFRESH_GRAPHS; seq++) {
            long startNs = seq * 10_000_000L;
            long stretchNs = seq * 1_000L; // each graph its own wall times
            fixture.same(seq, 1, startNs).arrivals(7, seq, startNs, startNs + 1_000_000 + stretchNs,
                    startNs + 2_000_000, startNs + 2_500_000, startNs + 2_600_000 + stretchNs);
        }
        fixture.finish();
        RooflineTotals reused = roofline.totals();
        // The same graphs, every one read node by node.
        for (int seq = 1; seq <= 3 * RooflineAggregator.REFRESH_GRAPHS; seq++) {
            long startNs = seq * 10_000_000L;
            long stretchNs = seq == 1 ? 0 : seq * 1_000L;
            new GraphFixture(everyNode)
                    .node(seq, startNs, 0, 0x9000, MUL_MAT, 0, 512, 1, 1, 1, Q4_WEIGHT, INPUT, 0, -1)
                    .node(seq, startNs, 1, 0x9001, MUL_MAT, 0, 256, 1, 1, 1, F16_WEIGHT, 0x9000, 0, -1)
                    .node(seq, startNs, 2, 0x9002, MUL_MAT, 0, 32, 1, 1, 1, KV_VIEW, 0x9001, 0, -1)
                    .node(seq, startNs, 3, 0x9003, ADD, 0, 256, 1, 1, 1, 0x9001, INPUT, 0, -1)
                    .arrivals(7, seq, startNs, startNs + 1_000_000 + stretchNs, startNs + 2_000_000,
                            startNs + 2_500_000, startNs + 2_600_000 + stretchNs);
        }
        fresh.finish();
        assertEquals(readEveryTime.totals().ops(), reused.ops());
        assertEquals(3L * RooflineAggregator.REFRESH_GRAPHS, reused.decodeGraphs());
        assertEquals(readEveryTime.totals().weightBytesPerDecodeToken(), reused.weightBytesPerDecodeToken());
        assertEquals(4, Collections.frequency(reads, KV_VIEW), "leaves still read again every 32 graphs: 1, 32, 64, 96");
    }

    /**
     * A leaf that changes shape in place (the KV cache's view as the context grows) is seen at the next refresh
     * (graphs 32, 64, 96, ...): a reused graph's costs follow it from there, and stand where nothing changed.
     */
    @Test
    void aReusedGraphIsCostedAgainWhenARefreshFindsALeafChanged() {
        decodeGraph(1, 10_000_000, 1);
        for (int seq = 2; seq <= 3 * RooflineAggregator.REFRESH_GRAPHS; seq++) {
            if (seq == 40) {
                memory.put(KV_VIEW, source(F16, false, 256, 64, 1)); // 32 more rows, read from graph 64 on
            }
            long startNs = seq * 10_000_000L;
            fixture.same(seq, 1, startNs).arrivals(7, seq, startNs, startNs + 1_000_000, startNs + 2_000_000,
                    startNs + 2_500_000, startNs + 2_600_000);
        }
        fixture.finish();
        long graphs = 3L * RooflineAggregator.REFRESH_GRAPHS;
        long newShapeGraphs = graphs - 2 * RooflineAggregator.REFRESH_GRAPHS + 1; // 64..96
        long flopsPerGraph = 2 * (256L * 512 + 512L * 256 + 256L * 32);
        assertEquals(graphs * flopsPerGraph + newShapeGraphs * 2 * 256L * 32, op(roofline.totals(), "MUL_MAT").flops(),
                "the view's 32 more rows from the refresh that read them");
        assertEquals(4, Collections.frequency(reads, KV_VIEW), "read at graphs 1, 32, 64 and 96");
        assertEquals(1, Collections.frequency(reads, Q4_WEIGHT), "a weight is read once");
        assertEquals(3, batches.size(), "each refresh reads its leaves at once: " + batches);
        for (List<Long> batch : batches) {
            assertEquals(Set.of(KV_VIEW, INPUT), Set.copyOf(batch), "the non-weights, each once: " + batch);
            assertEquals(2, batch.size());
        }
    }

    /** A reused MoE graph: the fixed groups' costs are kept, the routed ones follow each graph's own routing. */
    @Test
    void aReusedGraphCostsItsExpertsByEachGraphsRouting() {
        routing.put(1L, Map.of(1, rows(0, 0, 0, 1, 0, 1))); // experts 3 and 5
        routing.put(2L, Map.of(1, rows(1, 1)));              // experts 0 and 1
        routing.put(3L, Map.of(1, rows(0, 0, 0, 0, 0, 0, 0, 2))); // expert 7 twice: one slice, two rows
        moeGraph(1, 10_000_000, 1);
        fixture.same(2, 1, 20_000_000).arrivals(7, 2, 20_000_000, 20_100_000, 20_600_000, 21_100_000);
        fixture.same(3, 1, 30_000_000).arrivals(7, 3, 30_000_000, 30_100_000, 30_600_000, 31_100_000);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        long slice = 256L * 32 * 2;
        assertEquals(2 * (2 + 2 + 1) * slice, op(totals, "MUL_MAT_ID").weightBytes(), "2, 2 and 1 experts, twice");
        assertEquals(3, op(totals, "MUL_MAT").nodes(), "the router, kept from the first reading");
        assertEquals(256 * 8 * 2 + 2 * slice, totals.weightBytesPerDecodeToken(), "the last graph's: one expert");
        assertEquals(0, totals.unroutedNodes());
    }

    @Test
    void aLeafThatCanNoLongerBeReadKeepsTheShapeReadLast() {
        decodeGraph(1, 10_000_000, 1);
        fixture.finish();
        memory.remove(KV_VIEW); // the target exited; the collector drains its last graphs
        memory.remove(INPUT);
        for (int seq = 2; seq <= 2 * RooflineAggregator.REFRESH_GRAPHS; seq++) {
            decodeGraph(seq, seq * 10_000_000L, 1);
        }
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        assertEquals(0, totals.uncostedNodes(), totals.toString());
        assertEquals(2 * RooflineAggregator.REFRESH_GRAPHS * 3, op(totals, "MUL_MAT").nodes());
        assertEquals(3, Collections.frequency(reads, KV_VIEW), "tried again at each refresh");
    }

    /**
     * A server's decode steps of 4 and 2 tokens: each claims its graph (told before the graph is finished, as the
     * call ends before the next graph starts, or after), reads the weights once per step, and KV bytes = the
     * sequences' context lengths × bytes per position (none here: no attention node, so 0); a step whose batch
     * differs from its graph's, or told twice, is not counted.
     */
    @Test
    void decodeStepsOfAnySizeClaimTheirGraphsWeightsAndFlops() {
        long weights = 512L * (256 / 32 * 18) + 256L * 512 * 2;
        long flopsPerToken = 2 * (256L * 512 + 512L * 256 + 256L * 32) + 256; // three MUL_MATs and the ADD
        decodeGraph(1, 10_000_000, 4);
        roofline.onDecodeStep(1, 4, 400); // graph 1 not finished yet: pending
        decodeGraph(2, 20_000_000, 4); // finishes graph 1, which the pending step claims
        fixture.finish();
        roofline.onDecodeStep(2, 4, 404); // after its graph
        roofline.onDecodeStep(2, 4, 404); // told twice: counted once
        decodeGraph(3, 30_000_000, 2);
        fixture.finish();
        roofline.onDecodeStep(3, 3, 300); // 3 tokens told, the graph computed 2: not this step's graph
        RooflineTotals first = roofline.interval();
        assertEquals(1, first.decodeSteps().size(), first.decodeSteps().toString());
        DecodeSteps four = first.decodeSteps().getFirst();
        assertEquals(new DecodeSteps(4, 2, 8, 2 * weights, 0, 804, 2 * 4 * flopsPerToken,
                2 * 2_600_000), four);
        assertEquals(weights / 4.0, (double) four.weightBytes() / four.tokens(), 1e-9, "per token = step / tokens");
        decodeGraph(4, 40_000_000, 2);
        fixture.finish();
        roofline.onDecodeStep(4, 2, 200);
        RooflineTotals second = roofline.interval();
        assertEquals(List.of(new DecodeSteps(2, 1, 2, weights, 0, 200, 2 * flopsPerToken,
                2_600_000)), second.decodeSteps(), "the interval's steps only");
        assertEquals(2, roofline.totals().decodeSteps().size());
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
        assertEquals(3, op(interval, "MUL_MAT").nodes());
        assertEquals(2 * 16 * (256L * 512 + 512L * 256 + 256L * 32), op(interval, "MUL_MAT").flops());
        assertEquals(6, op(roofline.totals(), "MUL_MAT").nodes());
    }

    @Test
    void aGraphWithAnUnreadableSourceIsLeftOutAndKeepsTheWeightsPerTokenOfTheLastCompleteOne() {
        decodeGraph(1, 10_000_000, 1);
        fixture.finish();
        long complete = roofline.totals().weightBytesPerDecodeToken();
        // The target has exited: the next graph's weights cannot be read (none were cached: a new address).
        fixture.node(2, 20_000_000, 0, 0x9000, MUL_MAT, 0, 512, 1, 1, 1, Q4_WEIGHT, INPUT, 0, -1)
                .node(2, 20_000_000, 1, 0x9001, MUL_MAT, 0, 256, 1, 1, 1, 0x7777, 0x9000, 0, -1)
                .arrivals(7, 2, 20_000_000, 21_000_000, 22_000_000);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        assertEquals(2, totals.decodeGraphs());
        assertEquals(complete, totals.weightBytesPerDecodeToken(), "not the partial 0x7777-less sum");
        assertEquals(1, totals.uncostedNodes(), "its group is left out, bytes and wall time alike");
        assertEquals(4, op(totals, "MUL_MAT").nodes(), "three from the first graph, one from the second");
        assertEquals(2_500_000 + 1_000_000, op(totals, "MUL_MAT").wallNs());
    }

    /**
     * An MoE block of {@code tokens} tokens: the router's MUL_MAT (group 0), the gate's MUL_MAT_ID (group 1, where
     * the MoE layer copies the ids) and the down projection's (group 2) reading the same ids; 8 experts of
     * 256×32 (gate) and 32×256 (down), F16, 2 chosen per token.
     */
    private void moeGraph(long seq, long startNs, long tokens) {
        memory.put(IDS, source(I32, false, 2, tokens, 1));
        memory.put(INPUT, source(F32, false, 256, tokens, 1));
        fixture.node(seq, startNs, 0, 0xA000, MUL_MAT, 0, 8, tokens, 1, 1, ROUTER, INPUT, 0, -1)
                .node(seq, startNs, 1, 0xA001, MUL_MAT_ID, 0, 32, 2, tokens, 1, GATE_EXPS, INPUT, IDS, -1)
                .node(seq, startNs, 2, 0xA002, MUL_MAT_ID, 0, 256, 2, tokens, 1, DOWN_EXPS, 0xA001, IDS, -1)
                .arrivals(7, seq, startNs, startNs + 100_000, startNs + 600_000, startNs + 1_100_000);
    }

    private static long[] rows(long... perExpert) {
        long[] rows = new long[8];
        System.arraycopy(perExpert, 0, rows, 0, perExpert.length);
        return rows;
    }

    @Test
    void mulMatIdReadsOnlyTheSlicesOfTheExpertsTheRouterChose() {
        routing.put(1L, Map.of(1, rows(0, 0, 0, 1, 0, 1))); // one token to experts 3 and 5
        moeGraph(1, 10_000_000, 1);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        RooflineTotals.OpRoofline experts = op(totals, "MUL_MAT_ID");
        long slice = 256L * 32 * 2; // one expert's 256×32 F16 matrix, gate or down alike
        assertEquals(2, experts.nodes());
        assertEquals(2 * slice + 2 * slice, experts.weightBytes(), "two experts of eight, in both projections");
        long activations = 4 * (256 + 2 + 32 * 2) + 4 * (32 * 2 + 2 + 256 * 2);
        assertEquals(4 * slice + activations, experts.bytes());
        assertEquals(2 * 256L * 32 * 2 + 2 * 32L * 256 * 2, experts.flops(), "2·K·M per routed row");
        assertEquals(1_000_000, experts.wallNs());
        assertEquals(4 * slice, totals.expertWeightBytesPerDecodeToken());
        assertEquals(256 * 8 * 2 + 4 * slice, totals.weightBytesPerDecodeToken(), "the router's and the experts'");
        assertEquals(0, totals.unroutedNodes());
    }

    @Test
    void aPromptCostsEachDistinctChosenExpertOnceAndEveryRoutedRow() {
        routing.put(1L, Map.of(1, rows(3, 0, 2, 0, 0, 0, 3))); // 4 tokens × 2 = 8 rows on experts 0, 2 and 6
        moeGraph(1, 10_000_000, 4);
        fixture.finish();
        RooflineTotals.OpRoofline experts = op(roofline.totals(), "MUL_MAT_ID");
        long slice = 256L * 32 * 2;
        assertEquals(2 * 3 * slice, experts.weightBytes());
        assertEquals(2 * (2 * 256L * 32 * 8), experts.flops());
        assertEquals(0, roofline.totals().decodeGraphs());
    }

    @Test
    void withoutTheMoeLayersIdsExpertsAreNotGuessedButCountedUnrouted() {
        moeGraph(1, 10_000_000, 1); // no ids read for this graph: the MoE layer is off
        routing.put(2L, Map.of(1, rows(0, 0, 0, 1))); // a read cut short: one row of two
        moeGraph(2, 20_000_000, 1);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        assertNull(op(totals, "MUL_MAT_ID"), totals.toString());
        assertEquals(4, totals.unroutedNodes());
        assertEquals(4, totals.uncostedNodes());
        assertEquals(2, op(totals, "MUL_MAT").nodes(), "the router is costed");
        assertEquals(2, totals.decodeGraphs());
        assertEquals(0, totals.weightBytesPerDecodeToken(), "no decode graph was costed whole");
        assertEquals(4, roofline.interval().unroutedNodes());
        assertEquals(0, roofline.interval().unroutedNodes(), "intervals are derived from the run's counts");
    }

    @Test
    void aGraphSeenBeforeIsCostedWithoutAllocating() {
        // Sources and routing that allocate nothing themselves (the target's memory is read every 32 graphs).
        RooflineAggregator.Source router = memory.get(ROUTER);
        RooflineAggregator.Source gate = memory.get(GATE_EXPS);
        RooflineAggregator.Source down = memory.get(DOWN_EXPS);
        RooflineAggregator.Source ids = source(I32, false, 2, 1, 1);
        RooflineAggregator.Source input = source(F32, false, 256, 1, 1);
        long[] chosen = rows(0, 0, 0, 1, 0, 1);
        RooflineAggregator quiet = new RooflineAggregator(GraphFixture.naming(List.of("NONE", "MUL_MAT", "ADD",
                "MUL_MAT_ID"), 0, Set.of(0)), types, address -> address == ROUTER ? router
                : address == GATE_EXPS ? gate : address == DOWN_EXPS ? down : address == IDS ? ids
                : address == INPUT ? input : null, (seq, group) -> group == 1 ? chosen : null, null);
        long[] allocated = new long[1];
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        graphs.addListener(graph -> {
            for (int i = 0; i < 100; i++) {
                quiet.onGraph(graph); // warm: ops, node list and routing seen
            }
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 10_000; i++) {
                quiet.onGraph(graph);
            }
            allocated[0] = threads.getCurrentThreadAllocatedBytes() - before;
        });
        moeGraph(1, 10_000_000, 1);
        fixture.finish();
        // Under a byte a graph: an allocation per graph is 16 bytes or more a graph; one-offs (the JIT's, a
        // deoptimisation's, other tests' in the same JVM) are not.
        assertTrue(allocated[0] < 10_000, allocated[0] + " bytes over 10 000 graphs");
        assertEquals(10_100 * 2, op(quiet.totals(), "MUL_MAT_ID").nodes());
    }

    @Test
    void dataMovingOpsCountWhatTheyTouchAndAFusedGroupDoesNotReadItsOwnIntermediate() {
        memory.putAll(Map.of(TOKEN_EMBD, source(F16, true, 64, 1000, 1), TOKENS, source(I32, false, 3, 1, 1),
                NORM, source(F32, true, 64, 1, 1), CACHE, source(F16, false, 64, 256, 1),
                CACHE_ROWS, source(I32, false, 3, 1, 1)));
        long t0 = 10_000_000;
        fixture.typed(1, t0, 0, 0xB000, GET_ROWS, F32, 64, 3, 1, 1, TOKEN_EMBD, TOKENS, 0)
                .typed(1, t0, 1, 0xB001, RMS_NORM, F32, 64, 3, 1, 1, 0xB000, 0, 0)
                .typed(1, t0, 2, 0xB002, MUL, F32, 64, 3, 1, 1, 0xB001, NORM, 0)
                .typed(1, t0, 3, 0xB003, VIEW, F16, 64, 3, 1, 1, CACHE, 0, 0)
                .typed(1, t0, 4, 0xB004, SET_ROWS, F16, 64, 256, 1, 1, 0xB002, CACHE_ROWS, CACHE) // ggml's order
                .typed(1, t0, 5, 0xB005, CPY, F16, 64, 3, 1, 1, 0xB002, 0xB003, 0)
                .fused(7, 1, 1, 0xB001, 0xB002)
                .arrivals(7, 1, t0, t0 + 100, t0 + 300, t0 + 400, t0 + 500);
        fixture.finish();
        RooflineTotals totals = roofline.totals();
        RooflineTotals.OpRoofline getRows = op(totals, "GET_ROWS");
        assertEquals(3 * 64 * 2, getRows.weightBytes(), "three rows of the table, not the table");
        assertEquals(3 * 64 * 2 + 3 * 4 + 3 * 64 * 4, getRows.bytes());
        assertEquals(0, getRows.flops(), "moving data is no FLOP");
        RooflineTotals.OpRoofline norm = op(totals, "RMS_NORM+MUL");
        assertEquals(2, norm.nodes());
        assertEquals(192 * 4 + 192 * 4 + 64 * 4 + 192 * 4, norm.bytes(), "the norm's result is not read back");
        assertEquals(64 * 4, norm.weightBytes());
        assertEquals(2 * 192, norm.flops());
        assertEquals(200, norm.wallNs());
        RooflineTotals.OpRoofline setRows = op(totals, "SET_ROWS");
        assertEquals(192 * 4 + 3 * 4 + 192 * 2, setRows.bytes(), "three rows written, not the whole cache");
        RooflineTotals.OpRoofline cpy = op(totals, "CPY");
        assertEquals(192 * 4 + 192 * 2, cpy.bytes(), "its destination is written, not read");
        assertNull(op(totals, "VIEW"), "views are not run");
        assertTrue(!reads.contains(CACHE), "neither SET_ROWS nor the view reads the cache's header: " + reads);
    }
}
