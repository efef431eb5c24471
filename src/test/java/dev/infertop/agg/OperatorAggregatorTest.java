package dev.infertop.agg;

import dev.infertop.process.layout.OpTable;
import dev.infertop.event.NameTable;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.ThreadTotals;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The attribution maths on a hand-made graph: every number below is worked out by hand in the comments. */
class OperatorAggregatorTest {
    private static final int NONE = 0, ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 4, VIEW = 5;
    private static final int COMPUTE = 16;
    private static final List<String> NAMES = List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW");

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

    private final OperatorAggregator aggregator = new OperatorAggregator(naming, new NameTable());
    private final GraphFixture fixture = new GraphFixture(aggregator);

    /** Graph: 0 MUL_MAT, 1 VIEW (skipped), 2 RMS_NORM + 3 MUL (fused), 4 ADD, 5 ADD without COMPUTE (skipped). */
    private void graph(long seq) {
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD, ADD};
        int[] flags = {COMPUTE, COMPUTE, COMPUTE, COMPUTE, COMPUTE, 0};
        for (int i = 0; i < ops.length; i++) {
            fixture.node(seq, 0, i, 0x1000 + i, ops[i], flags[i], 8, 1, 1, 1, 0, 0, 0, -1);
        }
    }

    /** The ops of the interval since the last call, by name (takes the interval). */
    private Map<String, OpTotals> intervalOps() {
        return byName(aggregator.interval(List.of()).ops());
    }

    private static Map<String, OpTotals> byName(List<OpTotals> ops) {
        return ops.stream().collect(Collectors.toMap(OpTotals::op, Function.identity()));
    }

    /** The run's figures (the interval is left open). */
    private OperatorTotals run() {
        return aggregator.totals(List.of());
    }

    private void arrivals(int tid, long seq, long startNs, long... times) {
        fixture.arrivals(tid, seq, startNs, times);
    }

    @Test
    void splitsEachThreadsTimeIntoWorkAndBarrierWait() {
        graph(1);
        fixture.fused(7, 1, 2, 0x1002, 0x1003);
        // Groups: 1 MUL_MAT, 2 RMS_NORM+MUL, 3 ADD. Thread 7 starts at 0, thread 8 at 10.
        arrivals(7, 1, 0, 100, 130, 200, 210);   // the 4th is the barrier after the loop
        arrivals(8, 1, 10, 120, 125, 190, 210);
        aggregator.finishLastGraph();

        OperatorTotals interval = aggregator.interval(List.of());
        Map<String, OpTotals> ops = byName(interval.ops());
        // releases: 120 (max 100,120), 130 (max 130,125), 200 (max 200,190); the graph began at 0
        assertEquals(120, ops.get("MUL_MAT").wallNs());
        assertEquals(100 + 110, ops.get("MUL_MAT").workNs());      // 100-0, 120-10
        assertEquals(20 + 0, ops.get("MUL_MAT").waitNs());          // 120-100, 120-120
        assertEquals(10, ops.get("RMS_NORM+MUL").wallNs());          // 130-120
        assertEquals(2, ops.get("RMS_NORM+MUL").nodes());
        assertEquals(1, ops.get("RMS_NORM+MUL").groups());
        assertEquals(10 + 5, ops.get("RMS_NORM+MUL").workNs());      // 130-120, 125-120
        assertEquals(0 + 5, ops.get("RMS_NORM+MUL").waitNs());       // 130-130, 130-125
        assertEquals(70, ops.get("ADD").wallNs());                   // 200-130
        assertEquals(70 + 60, ops.get("ADD").workNs());
        assertEquals(0 + 10, ops.get("ADD").waitNs());
        assertEquals(3, ops.size(), "VIEW and the ADD without COMPUTE are not run");

        Map<Integer, ThreadTotals> threads = interval.threads().stream()
                .collect(Collectors.toMap(ThreadTotals::tid, Function.identity()));
        assertEquals(100 + 10 + 70, threads.get(7).workNs());
        assertEquals(20 + 0 + 0, threads.get(7).barrierWaitNs());
        assertEquals(110 + 5 + 60, threads.get(8).workNs());
        assertEquals(0 + 5 + 10, threads.get(8).barrierWaitNs());
        assertEquals(1, interval.graphsAttributed());
        assertEquals(0, interval.graphsUnattributed());
    }

    @Test
    void aReusedGraphIsAttributedWithTheNodesReadBefore() {
        graph(1);
        arrivals(7, 1, 0, 10, 20, 30, 40, 50);   // no fusion this time: 4 groups + final barrier
        fixture.same(2, 1, 1000);
        arrivals(7, 2, 1000, 1010, 1020, 1030, 1040, 1050);
        aggregator.finishLastGraph();
        assertEquals(2, run().graphsAttributed());
        OpTotals mulMat = aggregator.interval(List.of()).ops().stream().filter(o -> o.op().equals("MUL_MAT")).findFirst().orElseThrow();
        assertEquals(2, mulMat.groups());
        assertEquals(20, mulMat.wallNs()); // 10 per graph
    }

    @Test
    void aReReadGraphIdenticalToThePlannedOneKeepsItsPlan() {
        graph(1);
        arrivals(7, 1, 0, 10, 20, 30, 40, 50);
        fixture.graphs().finishGraph();
        String shapeOfFirst = intervalOps().get("MUL_MAT").lastShape();
        graph(2); // read again node by node, nothing changed
        arrivals(7, 2, 100, 110, 120, 130, 140, 150);
        fixture.graphs().finishGraph();
        // The same plan: its shape strings are not formatted again (a new plan makes new strings).
        assertSame(shapeOfFirst, intervalOps().get("MUL_MAT").lastShape());
    }

    @Test
    void aReReadGraphIsPlannedFromItsOwnNodesWhenOneOfThemChanged() {
        graph(1);
        arrivals(7, 1, 0, 10, 20, 30, 40, 50);   // 4 groups + final barrier
        // Read again (as the probes do every few dozen reuses) with the same node count: identical first,
        // then with node 4 an ADD turned MUL and node 0's shape changed. The plan kept from the first read
        // must serve only the identical one.
        graph(2);
        arrivals(7, 2, 100, 110, 120, 130, 140, 150);
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, MUL, ADD};
        int[] flags = {COMPUTE, COMPUTE, COMPUTE, COMPUTE, COMPUTE, 0};
        for (int i = 0; i < ops.length; i++) {
            fixture.node(3, 200, i, 0x1000 + i, ops[i], flags[i], i == 0 ? 16 : 8, 1, 1, 1, 0, 0, 0, -1);
        }
        arrivals(7, 3, 200, 210, 220, 230, 240, 250);
        aggregator.finishLastGraph();
        assertEquals(3, run().graphsAttributed());
        Map<String, OpTotals> ops3 = intervalOps();
        assertEquals(2, ops3.get("ADD").groups());   // graphs 1 and 2
        assertEquals(4, ops3.get("MUL").groups());   // 1 per graph, + the changed node of graph 3
        assertEquals(3, ops3.get("MUL_MAT").groups());
        assertEquals(" [16,1,1,1]", ops3.get("MUL_MAT").lastShape().substring(ops3.get("MUL_MAT").lastShape().indexOf(' ')));
    }

    /** The fused RMS_NORM+MUL of {@link #graph}, known from its function's name and not probed. */
    private void fusionNotProbed() {
        FusionPatterns fusion = new FusionPatterns(new OpTable(NAMES, List.of()));
        assertTrue(fusion.learn(List.of("ggml_compute_forward_rms_norm_mul_fused")));
        aggregator.fusion(fusion, false);
    }

    @Test
    void withTheFusedCallsUnprobedTheFusedGroupsComeFromTheGraphAndTheBarrierCounts() {
        fusionNotProbed();
        graph(1);
        arrivals(7, 1, 0, 100, 130, 200, 210);   // 3 groups (RMS_NORM+MUL fused) + final barrier; no fused report
        arrivals(8, 1, 10, 120, 125, 190, 210);
        fixture.same(2, 1, 1000);       // reused: the same inferred fusion
        arrivals(7, 2, 1000, 1050, 1060, 1100, 1110);
        arrivals(8, 2, 1000, 1050, 1060, 1100, 1110);
        aggregator.finishLastGraph();
        assertEquals(2, run().graphsAttributed());
        assertEquals(0, run().graphsUnattributed());
        Map<String, OpTotals> ops = intervalOps();
        assertEquals(2, ops.get("RMS_NORM+MUL").groups());
        assertEquals(4, ops.get("RMS_NORM+MUL").nodes());
        assertEquals(10 + 10, ops.get("RMS_NORM+MUL").wallNs()); // 130-120, 1060-1050
        assertEquals(3, ops.size());
        assertFalse(aggregator.fusedCallsNeeded());
    }

    @Test
    void anInferredFusionTheBarrierCountsDenyIsNotGuessedAndAsksForTheFusedCalls() {
        fusionNotProbed();
        graph(1);
        // The target did not fuse (say, a type it cannot fuse): 4 groups + final barrier. The inferred plan
        // has 3 groups; with the usual one-arrival slack it would pass, and mis-attribute every group after it.
        arrivals(7, 1, 0, 10, 20, 30, 40, 50);
        graph(2);
        arrivals(7, 2, 100, 110, 120, 130, 140); // the fused count but one thread short of its final barrier
        arrivals(8, 2, 100, 110, 120, 130);
        assertEquals(0, run().graphsAttributed());
        assertEquals(1, run().graphsUnattributed());
        // One or two such graphs can be a switch-on in mid-graph; the reused graphs repeat a real mismatch.
        assertFalse(aggregator.fusedCallsNeeded(), "not after one graph");
        fixture.same(3, 2, 150);
        arrivals(7, 3, 150, 160, 170, 180, 190, 200);
        fixture.same(4, 2, 250);
        arrivals(7, 4, 250, 260, 270, 280, 290, 300);
        aggregator.finishLastGraph();
        assertEquals(0, run().graphsAttributed());
        assertEquals(4, run().graphsUnattributed());
        assertTrue(aggregator.fusedCallsNeeded(), "the session must probe the fused calls now");
        aggregator.fusedCallsProbed(true);
        assertFalse(aggregator.fusedCallsNeeded());
        // Probed: the reports rule again, as before inference.
        graph(5);
        arrivals(7, 5, 400, 410, 420, 430, 440, 450);
        aggregator.finishLastGraph();
        assertEquals(1, run().graphsAttributed());
    }

    @Test
    void aListReadWithoutItsTailIsLostNodesNotAFusionTheBarrierCountsDeny() {
        fusionNotProbed();
        // The ring filled while graph 1's nodes were read: its first 4 of 6 came, the fused pair among them. The
        // graphs that reuse it ran the whole list (3 groups + final barrier); the part read lays out 2 groups.
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD, ADD};
        int[] flags = {COMPUTE, COMPUTE, COMPUTE, COMPUTE, COMPUTE, 0};
        for (int i = 0; i < 4; i++) {
            fixture.nodeOf(1, i, ops.length, 0x1000 + i, ops[i], flags[i]);
        }
        arrivals(7, 1, 0, 100, 130, 200, 210);
        for (int seq = 2; seq <= 6; seq++) {
            fixture.same(seq, 1, seq * 1000);
            arrivals(7, seq, seq * 1000, seq * 1000 + 50, seq * 1000 + 60, seq * 1000 + 100, seq * 1000 + 110);
        }
        // Read again, whole: attributed with the inferred fusion.
        graph(7);
        arrivals(7, 7, 7000, 7050, 7060, 7100, 7110);
        aggregator.finishLastGraph();
        assertEquals(6, run().graphsUnattributed(), "graph 1 and the 5 that reuse its part of a list");
        assertEquals(1, run().graphsAttributed());
        assertFalse(aggregator.fusedCallsNeeded(), "lost nodes are no reason to probe the fused calls");
        assertEquals(1, intervalOps().get("RMS_NORM+MUL").groups());
    }

    @Test
    void aMismatchBetweenMatchingGraphsIsASwitchNotAReasonToProbe() {
        fusionNotProbed();
        for (int seq = 1; seq <= 9; seq++) {
            graph(seq);
            if (seq % 3 == 0) {
                arrivals(7, seq, seq * 1000, seq * 1000 + 10, seq * 1000 + 20); // joined mid-graph: a partial count
            } else {
                arrivals(7, seq, seq * 1000, seq * 1000 + 10, seq * 1000 + 20, seq * 1000 + 30, seq * 1000 + 40);
            }
        }
        aggregator.finishLastGraph();
        assertEquals(6, run().graphsAttributed());
        assertEquals(3, run().graphsUnattributed());
        assertFalse(aggregator.fusedCallsNeeded());
    }

    @Test
    void aReusedGraphKeepsTheFusionOfTheGraphReadBefore() {
        graph(1);
        fixture.fused(7, 1, 2, 0x1002, 0x1003);
        arrivals(7, 1, 0, 100, 130, 200, 210);      // 3 groups (RMS_NORM+MUL fused) + final barrier
        // The probes report no fused call for a reused graph: it runs the fusion of graph 1.
        fixture.same(2, 1, 1000);
        arrivals(7, 2, 1000, 1050, 1060, 1100, 1110);
        aggregator.finishLastGraph();
        assertEquals(2, run().graphsAttributed());
        assertEquals(0, run().graphsUnattributed());
        Map<String, OpTotals> ops = intervalOps();
        assertEquals(2, ops.get("RMS_NORM+MUL").groups());
        assertEquals(30 + 10, ops.get("RMS_NORM+MUL").wallNs()); // 130-100, 1060-1050
        assertEquals(100 + 50, ops.get("MUL_MAT").wallNs());    // 100-0, 1050-1000
        assertEquals(70 + 40, ops.get("ADD").wallNs());          // 200-130, 1100-1060
        assertEquals(3, ops.size());
    }

    @Test
    void aBarrierCountThatDoesNotMatchTheGraphIsReportedNotGuessed() {
        graph(1);
        arrivals(7, 1, 0, 10, 20);               // 2 arrivals, the graph has 4 groups
        aggregator.finishLastGraph();
        assertEquals(0, run().graphsAttributed());
        assertEquals(1, run().graphsUnattributed());
        assertEquals(List.of(), aggregator.interval(List.of()).ops());
    }

    @Test
    void aReuseOfNodesNeverReceivedIsUnattributed() {
        fixture.same(5, 4, 0);
        arrivals(7, 5, 0, 10);
        aggregator.finishLastGraph();
        assertEquals(1, run().graphsUnattributed());
    }

    @Test
    void aGraphStillRunningWhenTracingStopsIsNeitherAttributedNorUnattributed() {
        graph(1);
        aggregator.finishLastGraph();
        assertEquals(0, run().graphsAttributed());
        assertEquals(0, run().graphsUnattributed());
    }

    @Test
    void anOlderLoopThatRunsEveryNodeWithABarrierAfterEachIsRecognised() {
        graph(1);
        // b4234/b3995 compute every node, empty ones too, and take a barrier after each: 6 arrivals.
        arrivals(7, 1, 0, 10, 20, 30, 40, 50, 60);
        aggregator.finishLastGraph();
        assertEquals(1, run().graphsAttributed());
        Map<String, Long> groups = run().ops().stream()
                .collect(Collectors.toMap(OpTotals::op, OpTotals::groups));
        assertEquals(Map.of("MUL_MAT", 1L, "VIEW", 1L, "RMS_NORM", 1L, "MUL", 1L, "ADD", 2L), groups);
    }

    @Test
    void arrivalsThatFitNeitherLoopAreNotGuessed() {
        graph(1);
        arrivals(7, 1, 0, 10, 20, 30, 40, 50, 60, 70);
        aggregator.finishLastGraph();
        assertEquals(0, run().graphsAttributed());
        assertEquals(1, run().graphsUnattributed());
    }
}
