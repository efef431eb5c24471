package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.model.OpTotals;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Which node each barrier arrival ends, for the two CPU node loops llama.cpp has had: the current one skips
 * empty nodes (VIEW, RESHAPE, …) and takes a barrier only after computed ones (plus possibly one after the
 * loop); the older one (b4234, b3995) computes every node and takes a barrier after each.
 */
class OperatorAggregatorTest {
    private static final int MUL_MAT = 1;
    private static final int VIEW = 2;
    private static final int ADD = 3;
    private static final int RESHAPE = 4;
    private static final Map<Integer, String> NAMES = Map.of(MUL_MAT, "MUL_MAT", VIEW, "VIEW", ADD, "ADD",
            RESHAPE, "RESHAPE");

    private static final OpNaming NAMING = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return NAMES.get(op);
        }

        @Override
        public boolean isEmpty(int op) {
            return op == VIEW || op == RESHAPE;
        }

        @Override
        public int computeFlag() {
            return 0;
        }
    };

    private final OperatorAggregator aggregator = new OperatorAggregator(NAMING, new NameTable());

    /** One graph: MUL_MAT, VIEW, ADD, RESHAPE; two threads, each arriving {@code arrivals} times, 1 ms apart. */
    private void graph(int arrivals) {
        int[] ops = {MUL_MAT, VIEW, ADD, RESHAPE};
        for (int i = 0; i < ops.length; i++) {
            aggregator.onNode(1, 100, i, ops.length, 0x1000 + i, ops[i], 0, 0, 0, 1, 1, 1, 1, 0);
        }
        for (int tid : new int[] {7, 8}) {
            aggregator.onThreadStart(tid, 1, 1_000_000, 0);
            for (int k = 1; k <= arrivals; k++) {
                aggregator.onNodeDone(tid, 1, k, 1_000_000L * (k + 1), 0);
            }
        }
        aggregator.finishGraph();
    }

    private Map<String, Long> groupsByOp() {
        List<OpTotals> ops = aggregator.snapshotOps(true);
        return ops.stream().collect(Collectors.toMap(OpTotals::op, OpTotals::groups));
    }

    @Test
    void loopThatSkipsEmptyNodes() {
        graph(2);
        assertEquals(1, aggregator.graphsAttributed(true));
        assertEquals(Map.of("MUL_MAT", 1L, "ADD", 1L), groupsByOp());
    }

    @Test
    void loopThatSkipsEmptyNodesWithABarrierAfterTheLoop() {
        graph(3);
        assertEquals(1, aggregator.graphsAttributed(true));
        assertEquals(Map.of("MUL_MAT", 1L, "ADD", 1L), groupsByOp());
    }

    @Test
    void olderLoopThatComputesEveryNode() {
        graph(4);
        assertEquals(1, aggregator.graphsAttributed(true));
        assertEquals(0, aggregator.graphsUnattributed(true));
        assertEquals(Map.of("MUL_MAT", 1L, "VIEW", 1L, "ADD", 1L, "RESHAPE", 1L), groupsByOp());
    }

    @Test
    void arrivalsThatFitNeitherLoopAreNotGuessed() {
        graph(5);
        assertEquals(0, aggregator.graphsAttributed(true));
        assertEquals(1, aggregator.graphsUnattributed(true));
    }
}
