package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.NameTable;
import dev.infertop.model.BackendNames;
import dev.infertop.model.GraphNode;
import dev.infertop.model.RunState;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The last decode graph kept for the DAG, fed through the TraceAggregator as the collector feeds it. */
class DagRecorderTest {
    private static final int NONE = 0, ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 4, VIEW = 5;
    private static final int COMPUTE = 16;
    private static final List<String> NAMES = List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW");
    private static final long W = 0x9000, X = 0x9100;

    private final OpNaming naming = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return NAMES.get(op);
        }

        @Override
        public boolean isEmpty(int op) {
            return op == NONE || op == VIEW;
        }

        @Override
        public int computeFlag() {
            return COMPUTE;
        }
    };

    private final NameTable names = new NameTable();
    private final OperatorAggregator operators = new OperatorAggregator(naming, names);
    private final DagRecorder recorder = new DagRecorder(naming, names);
    private final TraceAggregator aggregator = Routers.of(BackendNames.parse(""), operators).register(recorder);
    private final GraphFixture fixture = new GraphFixture(operators);

    /** A recorder on a graph walk of its own, with the fixture that feeds it. */
    private GraphFixture walkFor(DagRecorder dag) {
        CpuGraphAssembler graphs = new CpuGraphAssembler(naming);
        graphs.addListener(dag);
        return new GraphFixture(graphs);
    }

    /** 0 MUL_MAT(W,X), 1 VIEW(0), 2 RMS_NORM(1) + 3 MUL(2,W) fused, 4 ADD(3,0). */
    private void graph(long seq, long base) {
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD};
        long[][] sources = {{W, X, 0}, {base, 0, 0}, {base + 1, 0, 0}, {base + 2, W, 0}, {base + 3, base, 0}};
        for (int i = 0; i < ops.length; i++) {
            fixture.node(seq, 0, i, base + i, ops[i], COMPUTE, 8, 1, 1, 1, sources[i][0], sources[i][1],
                    sources[i][2], -1);
        }
        fixture.fused(7, seq, 2, base + 2, base + 3);
    }

    private void arrivals(long seq, long startNs, long... times) {
        fixture.arrivals(7, seq, startNs, times);
    }

    private void decode(int nTokens) {
        Routers.tokens(aggregator).onDecode(7, 0, 1, 0x77, nTokens, 0);
    }

    private void publish() {
        aggregator.snapshot(5_000, RunState.DONE, new TargetInfo(1, "llama-bench", null, List.of()), 0, List.of());
    }

    @Test
    void keepsTheLastDecodeGraphWithItsTimesNotPrefill() {
        graph(1, 0x1000);
        arrivals(1, 0, 100, 130, 200, 210);
        decode(5); // prefill: not kept
        graph(2, 0x2000);
        arrivals(2, 1000, 1040, 1060, 1100, 1110);
        decode(1); // a decode step
        fixture.same(3, 2, 2000);
        arrivals(3, 2000, 2001, 2002, 2003, 2004);
        decode(4); // prefill again, on the same nodes: the decode graph kept stays graph 2
        publish();

        List<GraphNode> nodes = recorder.lastDecodeGraph();
        assertEquals(5, nodes.size());
        assertEquals("MUL_MAT", nodes.get(0).op());
        assertEquals(0x2000, nodes.get(0).tensor());
        assertEquals(List.of(W, X, 0L), nodes.get(0).sources());
        assertEquals(40, nodes.get(0).timeNs());          // 1040 - 1000
        assertFalse(nodes.get(1).executed());             // VIEW: skipped by the loop
        assertEquals(0, nodes.get(1).timeNs());
        assertEquals(10, nodes.get(2).timeNs());          // RMS_NORM+MUL: 20, shared by two nodes
        assertEquals(10, nodes.get(3).timeNs());
        assertEquals(40, nodes.get(4).timeNs());          // 1100 - 1060
        assertTrue(nodes.get(4).executed());
        assertEquals(List.of(0x2003L, 0x2000L, 0L), nodes.get(4).sources());
    }

    /**
     * Reused graphs share a node list; the recorder's buffers take turns, so each must hold the nodes of the graph
     * it was given, with that graph's own times, whichever list it held before.
     */
    @Test
    void reusedDecodeGraphsKeepTheirOwnTimesOnTheirNodeList() {
        graph(1, 0x1000);
        arrivals(1, 0, 100, 130, 200, 210);
        decode(1);
        graph(2, 0x2000);
        arrivals(2, 1000, 1040, 1060, 1100, 1110);
        decode(1);
        fixture.same(3, 2, 2000);
        arrivals(3, 2000, 2007, 2008, 2009, 2010);
        decode(1);
        publish();
        List<GraphNode> nodes = recorder.lastDecodeGraph();
        assertEquals(0x2000, nodes.get(0).tensor(), "graph 2's nodes, in the buffer that held graph 1's");
        assertEquals(7, nodes.get(0).timeNs(), "graph 3's own time");
        assertEquals(List.of(0x2003L, 0x2000L, 0L), nodes.get(4).sources());

        fixture.same(4, 2, 3000);
        arrivals(4, 3000, 3005, 3006, 3007, 3008);
        decode(1);
        publish();
        nodes = recorder.lastDecodeGraph();
        assertEquals(0x2000, nodes.get(0).tensor());
        assertEquals(5, nodes.get(0).timeNs());

        graph(5, 0x5000);
        arrivals(5, 4000, 4003, 4004, 4005, 4006);
        decode(1);
        publish();
        nodes = recorder.lastDecodeGraph();
        assertEquals(0x5000, nodes.get(0).tensor(), "a new node list is copied whole");
        assertEquals(List.of(0x5003L, 0x5000L, 0L), nodes.get(4).sources());
        assertEquals(3, nodes.get(0).timeNs());
    }

    @Test
    void aGraphAttributedBeforeItsDecodeRecordIsKeptWhenTheRecordComes() {
        DagRecorder direct = new DagRecorder(naming, names);
        GraphFixture walk = walkFor(direct);
        walk.node(5, 0, 0, 0xa, MUL_MAT, COMPUTE, 4, 1, 1, 1, W, X, 0, -1);
        walk.node(5, 0, 1, 0xb, ADD, COMPUTE, 4, 1, 1, 1, 0xa, 0, 0, -1);
        walk.arrivals(7, 5, 0, 70, 100);              // groups of 70 and 30
        walk.graphs().finishGraph();
        direct.publish();
        assertEquals(List.of(), direct.lastDecodeGraph(), "not known to be a decode step yet");
        direct.onDecode(1, walk.graphs().latestSeq());
        direct.publish();
        assertEquals(2, direct.lastDecodeGraph().size());
        assertEquals(70, direct.lastDecodeGraph().get(0).timeNs());
        assertEquals(30, direct.lastDecodeGraph().get(1).timeNs());
    }

    @Test
    void sourcesOutsideTheGraphAreNamedOnceEach() {
        java.util.List<Long> asked = new java.util.ArrayList<>();
        DagRecorder named = new DagRecorder(naming, names, address -> {
            asked.add(address);
            return address == W ? "blk.0.attn_q.weight" : null;
        });
        GraphFixture walk = walkFor(named);
        for (int round = 0; round < 2; round++) {
            long seq = round + 1;
            walk.node(seq, 0, 0, 0xa, MUL_MAT, COMPUTE, 4, 1, 1, 1, W, X, 0, -1);
            walk.node(seq, 0, 1, 0xb, ADD, COMPUTE, 4, 1, 1, 1, 0xa, W, 0, -1);
            walk.arrivals(7, seq, 0, 70 + round, 100 + round); // groups of 70 + round and 30
            named.onDecode(1, walk.graphs().latestSeq());
            walk.graphs().finishGraph();
            named.publish();
        }
        List<GraphNode> nodes = named.lastDecodeGraph();
        assertEquals(List.of("blk.0.attn_q.weight", "", ""), nodes.get(0).sourceNames());
        assertEquals(List.of("", "blk.0.attn_q.weight", ""), nodes.get(1).sourceNames(), "0xa is a node, not a leaf");
        assertEquals(71, nodes.get(0).timeNs());
        assertEquals(List.of(W, X), asked, "each leaf address is read once");
    }

    @Test
    void nothingBeforeAnyDecodeStep() {
        graph(1, 0x1000);
        arrivals(1, 0, 100, 130, 200, 210);
        decode(8);
        publish();
        assertEquals(List.of(), recorder.lastDecodeGraph());
    }
}
