package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.model.Limits;
import dev.infertop.event.EventLayout;
import dev.infertop.event.ExpertIds;
import dev.infertop.event.NameTable;
import dev.infertop.model.MoeTotals;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class MoeAggregatorTest {
    private static final int MUL_MAT = 1;
    private static final int MUL_MAT_ID = 2;
    private static final int VIEW = 3;
    private static final long SIGNATURE = 0xabcdefL;

    private final OpNaming naming = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return switch (op) {
                case MUL_MAT -> "MUL_MAT";
                case MUL_MAT_ID -> "MUL_MAT_ID";
                case VIEW -> "VIEW";
                default -> "NONE";
            };
        }

        @Override
        public boolean isEmpty(int op) {
            return op == VIEW;
        }

        @Override
        public int computeFlag() {
            return 0;
        }
    };
    private final NameTable names = new NameTable();
    private final List<String> written = new ArrayList<>();
    private final MoeAggregator moe = new MoeAggregator(naming, names, (signature, groups, ids, layers) -> {
        written.add(Long.toHexString(signature) + " " + Arrays.toString(groups) + " " + Arrays.toString(ids) + " "
                + Arrays.toString(layers));
        return true;
    });
    private final Arena arena = Arena.ofAuto();
    /** The CPU graph walk the MoE layer listens to, fed as TraceAggregator feeds it. */
    private final GraphFixture fixture = new GraphFixture(new CpuGraphAssembler(naming));

    MoeAggregatorTest() {
        fixture.graphs().addListener(moe);
    }

    /** A node as the MoE layer reads it: op, flags, tokens (ne2), ids tensor (src2), name. */
    private void node(long seq, int index, long tensor, int op, int flags, long tokens, long idsTensor, int nameId) {
        fixture.node(seq, 0, index, tensor, op, flags, 8, 1, tokens, 1, 0, 0, idsTensor, nameId);
    }

    /** Tracing ends: the last CPU graph, then the MoE graph are finished, and the figures taken. */
    private MoeTotals finalSnapshot() {
        fixture.finish();
        moe.finishLastGraph();
        return moe.snapshot(true);
    }

    private int name(String text) {
        MemorySegment bytes = arena.allocate(64);
        bytes.setString(0, text, StandardCharsets.UTF_8);
        return names.intern(bytes, 0, 64);
    }

    /** attention matmul, then per layer: ids view, MUL_MAT_ID gate/up/down (layer 0) or gate only (layer 1). */
    private void nodes(long seq, long tokens) {
        int i = 0;
        node(seq, i++, 0x10, MUL_MAT, 0, 1, 0, name("kq-0"));
        node(seq, i++, 0x100, VIEW, 0, 1, 0, name("ffn_moe_topk-0 (view)"));
        node(seq, i++, 0x20, MUL_MAT_ID, 0, tokens, 0x100, name("ffn_moe_gate-0"));
        node(seq, i++, 0x30, MUL_MAT_ID, 0, tokens, 0x100, name("ffn_moe_up-0"));
        node(seq, i++, 0x40, MUL_MAT_ID, 0, tokens, 0x100, name("ffn_moe_down-0"));
        node(seq, i++, 0x200, VIEW, 0, 1, 0, name("ffn_moe_topk-1 (view)"));
        node(seq, i, 0x50, MUL_MAT_ID, 0, tokens, 0x200, name("ffn_moe_gate-1"));
    }

    private void graph(long seq, boolean planned) {
        fixture.graphs().onGraphStart(seq, 0); // the MoE graph record starts the CPU graph too (TraceAggregator)
        moe.onMoe(seq, SIGNATURE, EventLayout.MOE_GRAPH, 0, planned ? 1 : 0, -1, 0, 0, 0, false, ExpertIds.NONE);
    }

    /** One thread: started at 1000 ns, arrived after groups 0..4 at these times. */
    private void arrivals(long seq, long... times) {
        fixture.arrivals(7, seq, 1000, times);
    }

    /** An ids record of rows of 2 experts, rows 32 bytes apart (a view of an 8-expert argsort). */
    private void ids(long seq, int group, int layer, int[][] rows, int bytes) {
        MemorySegment data = arena.allocate(EventLayout.MOE_MAX_ID_BYTES, 8);
        for (int t = 0; t < rows.length; t++) {
            for (int j = 0; j < rows[t].length; j++) {
                data.set(ValueLayout.JAVA_INT, 32L * t + 4L * j, rows[t][j]);
            }
        }
        moe.onMoe(seq, SIGNATURE, EventLayout.MOE_IDS, group, bytes, layer, 2, rows.length, 32, false, ExpertIds.of(data, bytes));
    }

    @Test
    void aLayerPastTheCapIsCountedNeverAllocated() {
        // The target names its tensors: "ffn_moe_gate-99999" would size every layer x expert table to 100 000 rows.
        graph(1, true);
        ids(1, 1, 99_999, new int[][] {{0, 1}}, 8);
        ids(1, 1, MoeAggregator.MAX_LAYERS, new int[][] {{0, 1}}, 8);
        ids(1, 1, MoeAggregator.MAX_LAYERS - 1, new int[][] {{0, 1}}, 8);
        graph(2, true);
        assertEquals(2, moe.readsOverLayerCap());
        assertEquals(MoeAggregator.MAX_LAYERS, moe.snapshot(true).windowDecode().length, "layers up to the cap only");
    }

    @Test
    void aNewGraphSignaturePerComputeKeepsAsManyPlansAsBpfHoldsAndCountsTheRest() {
        // The signature is the graph's node pointers: a target that builds its graph anew each time has a new one.
        int graphs = 200;
        for (long seq = 1; seq <= graphs; seq++) {
            fixture.graphs().onGraphStart(seq, 0);
            moe.onMoe(seq, 0x5000_0000L + seq, EventLayout.MOE_GRAPH, 0, 0, -1, 0, 0, 0, false, ExpertIds.NONE);
            nodes(seq, 1);
            arrivals(seq, 1100, 1300, 1600, 2000, 2100);
        }
        MoeTotals totals = finalSnapshot();
        assertEquals(MoeAggregator.MAX_PLANS, written.size(), "one plan written per signature kept");
        assertEquals(graphs - MoeAggregator.MAX_PLANS, moe.graphsUnplanned());
        var bounds = MoeAggregator.bounds(moe, totals);
        var limits = new Limits(bounds);
        assertEquals(MoeAggregator.MAX_PLANS, limits.value("moe_plans"));
        assertEquals(graphs - MoeAggregator.MAX_PLANS, limits.value("moe_graphs_unplanned"));
        // Every graph's MoE rows are counted, planned or not: none was read (no ids record came), so all are unread.
        assertArrayEquals(new long[] {graphs, graphs}, totals.rowsUnreadByLayer());
        assertEquals(graphs, totals.graphsWithoutIds());
    }

    @Test
    void expertIdsPastLlamasMaximumAreDroppedAndCounted() {
        graph(1, true);
        ids(1, 1, 0, new int[][] {{0, MoeAggregator.MAX_EXPERTS}, {-1, 5}, {Integer.MAX_VALUE, 2}}, 2 * 32 + 8);
        graph(2, true);
        MoeTotals totals = moe.snapshot(true);
        assertEquals(3, moe.idsOutOfRange());
        assertEquals(3, new Limits(MoeAggregator.bounds(moe, totals)).value("moe_ids_dropped"));
        assertEquals(8, totals.expertCount(), "the bad ids sized no table: nb1 / 4 = 8 experts");
    }

    @Test
    void plansTheFirstMulMatIdOfEachLayerAndCountsRoutedTokens() {
        graph(1, false);
        nodes(1, 3);
        arrivals(1, 1100, 1300, 1600, 2000, 2100);
        graph(2, true); // graph 1 finishes: its plan goes to BPF
        assertEquals(List.of("abcdef [1, 4] [256, 512] [0, 1]"), written,
                "groups: VIEW nodes are skipped, so gate-0 runs as group 1 and gate-1 as group 4");
        fixture.same(2, 1, 0);
        ids(2, 1, 0, new int[][] {{0, 1}, {0, 2}, {3, 0}}, 2 * 32 + 8);
        arrivals(2, 1100, 1300, 1600, 2000, 2100);
        MoeTotals totals = finalSnapshot();

        assertArrayEquals(new long[] {3, 1, 1, 1, 0, 0, 0, 0}, totals.totalPrefill()[0]);
        assertArrayEquals(new long[] {3, 0}, totals.totalRowsPrefill());
        assertArrayEquals(new long[] {3, 0}, totals.windowRowsPrefill());
        assertEquals(8, totals.expertCount(), "nb1 / 4: a view of an 8-expert argsort");
        assertEquals(2, totals.expertsUsed());
        // Graph 1 ran before any plan (3 tokens unread in both layers); graph 2 lacks layer 1's read.
        assertArrayEquals(new long[] {3, 6}, totals.rowsUnreadByLayer());
        assertEquals(2, totals.graphsWithoutIds());
        assertEquals(1, totals.nodesRead());
        assertEquals(72, totals.idBytesCopied());
        // Layer 0's MoE node time: groups 1..3 = (1300-1100) + (1600-1300) + (2000-1600) = 900 ns.
        MoeTotals.ExpertStats expert0 = totals.experts().get(0);
        assertEquals(1, expert0.activeNodes());
        assertEquals(900e-6, expert0.nodeP50Ms(), 4e-6); // HdrHistogram at 2 digits: 900..903 ns
        assertEquals(900e-6 * 3 / 6, expert0.rowShareMs(), 1e-12); // 3 of the node's 6 routed rows
        assertEquals(900e-6 / 6, totals.experts().get(3).rowShareMs(), 1e-12);
        assertEquals(1.0, expert0.meanReuseTokens(), 1e-12); // tokens 0, 1, 2 in a row: distances 1 and 1
    }

    @Test
    void aListenerAfterTheMoeLayerGetsTheGraphsRoutingByTheGroupItWasCopiedAt() {
        List<String> seen = new ArrayList<>();
        fixture.graphs().addListener(graph -> seen.add(graph.seq() + ": group 1 " + Arrays.toString(
                moe.rowsPerExpert(graph.seq(), 1)) + ", group 2 " + moe.rowsPerExpert(graph.seq(), 2)
                + ", graph 9 " + moe.rowsPerExpert(9, 1)));
        graph(1, true);
        nodes(1, 3);
        ids(1, 1, 0, new int[][] {{0, 1}, {0, 2}, {3, 0}}, 2 * 32 + 8);
        arrivals(1, 1100, 1300, 1600, 2000, 2100);
        graph(2, true); // the CPU graph 1 is finished: its listeners are told, the MoE layer's first
        assertEquals(List.of("1: group 1 [3, 1, 1, 1, 0, 0, 0, 0], group 2 null, graph 9 null"), seen);
        assertEquals(null, moe.rowsPerExpert(2, 1), "graph 2 has no read yet");
    }

    @Test
    void rowsBeyondTheBoundAreTruncatedAndReported() {
        // 600 tokens, rows 32 bytes apart: the span is 599 * 32 + 8 = 19176 bytes, above the 16384 bound.
        assertEquals(512, MoeAggregator.rowsIn(16384, 2, 600, 32)); // (16384 - 8) / 32 + 1 = 512.75 → 512
        assertEquals(600, MoeAggregator.rowsIn(19176, 2, 600, 32));
        assertEquals(1, MoeAggregator.rowsIn(8, 2, 1, 32));
        assertEquals(0, MoeAggregator.rowsIn(4, 2, 1, 32));
        graph(1, true);
        int[][] rows = new int[600][];
        for (int t = 0; t < rows.length; t++) {
            rows[t] = new int[] {t % 8, (t + 1) % 8};
        }
        MemorySegment data = arena.allocate(32L * 600, 8);
        for (int t = 0; t < 600; t++) {
            data.set(ValueLayout.JAVA_INT, 32L * t, rows[t][0]);
            data.set(ValueLayout.JAVA_INT, 32L * t + 4, rows[t][1]);
        }
        moe.onMoe(1, SIGNATURE, EventLayout.MOE_IDS, 1, 16384, 0, 2, 600, 32, false, ExpertIds.of(data, 16384));
        MoeTotals totals = finalSnapshot();
        assertEquals(1, totals.nodesTruncated());
        assertEquals(88, totals.rowsTruncated());
        assertArrayEquals(new long[] {512}, totals.totalRowsPrefill());
        assertArrayEquals(new long[] {88}, totals.rowsUnreadByLayer());
        assertEquals(1024, Arrays.stream(totals.totalPrefill()[0]).sum());
    }

    @Test
    void planWrittenToBpfNumbersGroupsAsIfNothingWereFused() {
        // RMS_NORM + MUL run fused as group 0; the MUL_MAT_ID is then group 1 to the threads, but BPF keys
        // plans by executed nodes (2 before it) and adds each thread's fused ops to its arrival index.
        graph(1, false);
        node(1, 0, 0x10, 4, 0, 1, 0, name("norm-0"));
        node(1, 1, 0x11, 5, 0, 1, 0, name("ffn_norm-0"));
        node(1, 2, 0x100, VIEW, 0, 1, 0, name("ffn_moe_topk-0 (view)"));
        node(1, 3, 0x20, MUL_MAT_ID, 0, 1, 0x100, name("ffn_moe_gate-0"));
        fixture.fused(7, 1, 1, 0x10, 0x11);
        arrivals(1, 1100, 1300);
        graph(2, false);
        assertEquals(List.of("abcdef [2] [256] [0]"), written);
    }

    @Test
    void aRunThatNeverHadTheLayerOnShowsNoMoeFigures() {
        assertEquals(false, moe.snapshot(false).active());
        graph(1, false);
        assertEquals(true, moe.snapshot(false).active(), "switched off after it ran: figures stay");
    }

    @Test
    void layerComesFromTheTensorName() {
        assertEquals(12, MoePlanner.layerOf("ffn_moe_gate-12"));
        assertEquals(0, MoePlanner.layerOf("ffn_moe_down-0"));
        assertEquals(-1, MoePlanner.layerOf("ffn_moe_gate"));
        assertEquals(-1, MoePlanner.layerOf("ffn_moe_topk-3 (view)"));
    }

    @Test
    void failedReadsCountAndLeaveTheirRowsUnread() {
        graph(1, false);
        nodes(1, 5);
        arrivals(1, 1100, 1300, 1600, 2000, 2100);
        graph(2, true);
        fixture.same(2, 1, 0);
        moe.onMoe(2, SIGNATURE, EventLayout.MOE_IDS, 1, 0, 0, 0, 0, 0, true, ExpertIds.NONE);
        ids(2, 4, 1, new int[][] {{1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 3}}, 4 * 32 + 8);
        arrivals(2, 1100, 1300, 1600, 2000, 2100);
        MoeTotals totals = finalSnapshot();
        assertEquals(1, totals.readFailures());
        assertArrayEquals(new long[] {5 + 5, 5}, totals.rowsUnreadByLayer());
        assertArrayEquals(new long[] {0, 5, 4, 1, 0, 0, 0, 0}, totals.totalPrefill()[1]);
        assertEquals(2, totals.graphsWithoutIds());
    }
}
