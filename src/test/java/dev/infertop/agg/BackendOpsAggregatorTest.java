package dev.infertop.agg;

import dev.infertop.event.OpCounts;
import dev.infertop.model.BackendNames;
import dev.infertop.model.BackendOps;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Op counts of non-CPU graphs, paired with their durations by thread, with exact numbers. */
class BackendOpsAggregatorTest {
    private static final int NONE = 0, ADD = 1, MUL_MAT = 3, VIEW = 5;
    private static final List<String> NAMES = List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW");
    // BLAS's GUID from config/backends.conf: 12a8aef4c01e6197 8feb3304a133512d
    private static final long BLAS_HIGH = 0x12a8aef4c01e6197L, BLAS_LOW = 0x8feb3304a133512dL;

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
            return 0;
        }
    };

    private final BackendOpsAggregator aggregator = new BackendOpsAggregator(
            BackendNames.parse("12a8aef4c01e61978feb3304a133512d BLAS\n"), naming);

    private static OpCounts counts(int... opAndCount) {
        int[] counts = new int[BackendOpsAggregator.OP_SLOTS];
        for (int i = 0; i < opAndCount.length; i += 2) {
            counts[opAndCount[i]] = opAndCount[i + 1];
        }
        return OpCounts.of(counts);
    }

    @Test
    void aGraphOfOneOpGivesThatOpItsTime() {
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 3, VIEW, 2));
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 9_000);
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 1));
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 1_000);

        BackendOps blas = aggregator.interval().getFirst();
        assertEquals("BLAS", blas.backend());
        assertEquals(2, blas.graphs());
        assertEquals(10_000, blas.busyNs());
        BackendOps.Op mulMat = blas.ops().get(0);
        assertEquals("MUL_MAT", mulMat.op());
        assertEquals(4, mulMat.nodes());
        assertEquals(10_000, mulMat.timeNs());
        assertTrue(mulMat.timed());
        BackendOps.Op view = blas.ops().get(1);
        assertEquals("VIEW", view.op());
        assertEquals(2, view.nodes());
        assertFalse(view.timed(), "views compute nothing: no time of their own");
    }

    @Test
    void aMixedGraphsTimeStaysWithTheBackend() {
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 2, ADD, 1));
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 5_000);
        BackendOps blas = aggregator.interval().getFirst();
        assertEquals(5_000, blas.busyNs());
        for (BackendOps.Op op : blas.ops()) {
            assertFalse(op.timed(), op.op());
            assertEquals(0, op.timeNs());
        }
    }

    @Test
    void aComputeWithoutCountsIsNotAttributedAndIntervalsReset() {
        aggregator.onGraphCompute(12, 0xaa67c74396e6a38aL, 0xe3afea9236bcfc89L, 4_000); // a CPU graph: no counts
        assertEquals(List.of(), aggregator.interval());
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 1));
        aggregator.onGraphCompute(12, BLAS_HIGH, BLAS_LOW, 100); // another thread: not this graph
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 300);
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 700); // counts already used
        assertEquals(300, aggregator.interval().getFirst().busyNs());
        assertEquals(0, aggregator.interval().getFirst().graphs());
        assertEquals(1, aggregator.totals().getFirst().graphs());
        assertEquals(300, aggregator.totals().getFirst().ops().getFirst().timeNs());
    }

    @Test
    void aGraphFollowedNodeByNodeCountsItsDispatchesAndFusedNodesPerOp() {
        final int MUL = 2, RMS_NORM = 4;
        // 2 graphs of: RMS_NORM (MUL fused into it), VIEW, MUL_MAT, MUL_MAT (ADD fused into it).
        for (int graph = 0; graph < 2; graph++) {
            aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(RMS_NORM, 1, MUL, 1, VIEW, 1, MUL_MAT, 2, ADD, 1));
            aggregator.onBackendDispatch(11, BLAS_HIGH, BLAS_LOW, counts(RMS_NORM, 1, VIEW, 1, MUL_MAT, 2),
                    counts(MUL, 1, ADD, 1));
            aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 1_000);
        }
        // a third graph whose dispatch was not followed (the window closed in it) adds nodes, no dispatch
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 2));
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 1_000);
        // a dispatch record with no op counts before it (a graph begun before the window) is left out
        aggregator.onBackendDispatch(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 9), counts(ADD, 9));

        BackendOps blas = aggregator.totals().getFirst();
        assertEquals(3, blas.graphs());
        BackendOps.NodeDispatch d = blas.dispatch();
        assertEquals(2, d.graphs());
        assertEquals(8, d.calls());       // (RMS_NORM + VIEW + 2 MUL_MAT) x 2
        assertEquals(6, d.dispatches());  // the views' calls dispatch nothing
        assertEquals(4, d.fusedNodes());
        assertEquals(new BackendOps.OpDispatch("MUL_MAT", 4, 0, false), d.ops().get(0));
        assertTrue(d.ops().contains(new BackendOps.OpDispatch("MUL", 0, 2, false)), d.ops().toString());
        assertTrue(d.ops().contains(new BackendOps.OpDispatch("ADD", 0, 2, false)), d.ops().toString());
        assertTrue(d.ops().contains(new BackendOps.OpDispatch("VIEW", 2, 0, true)), d.ops().toString());
        assertTrue(d.ops().contains(new BackendOps.OpDispatch("RMS_NORM", 2, 0, false)), d.ops().toString());
        assertEquals(5, d.ops().size());

        // the interval closes: the next one has none followed, but the backend was followed before, so it says 0
        aggregator.interval();
        BackendOps.NodeDispatch next = aggregator.interval().getFirst().dispatch();
        assertEquals(0, next.graphs());
        assertEquals(0, next.calls());
    }

    @Test
    void aBackendNeverFollowedNodeByNodeHasNoDispatchFigures() {
        aggregator.onBackendOps(11, BLAS_HIGH, BLAS_LOW, counts(MUL_MAT, 3));
        aggregator.onGraphCompute(11, BLAS_HIGH, BLAS_LOW, 9_000);
        assertEquals(null, aggregator.totals().getFirst().dispatch());
    }
}
