package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpTotals;
import dev.infertop.model.ThreadLane;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Tensor groups and thread lanes, from a hand-made graph. */
class OperatorLanesTest {
    /** One thread's start and barrier arrivals, as the BPF side sends them once per graph. */
    private static void arrivals(OperatorAggregator aggregator, int tid, long seq, long startNs, long... times) {
        new GraphFixture(aggregator).arrivals(tid, seq, startNs, times);
    }

    private static final OpNaming NAMING = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return switch (op) {
                case 1 -> "MUL_MAT";
                case 2 -> "RMS_NORM";
                default -> "OP" + op;
            };
        }

        @Override
        public boolean isEmpty(int op) {
            return op == 0;
        }

        @Override
        public int computeFlag() {
            return 0;
        }
    };

    private static int intern(NameTable names, String name) {
        try (Arena arena = Arena.ofConfined()) {
            byte[] bytes = (name + "\0").getBytes(StandardCharsets.US_ASCII);
            MemorySegment segment = arena.allocate(64);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, segment, 0, bytes.length);
            return names.intern(segment, 0, 64);
        }
    }

    /**
     * Two threads, two groups: thread 1 works 40 ms on a matmul and waits 10 ms, thread 2 works 50 ms; then a
     * norm of 60 ms on both. Cells are 50 ms: the lanes show matmul, then wait/matmul, then norm.
     */
    @Test
    void tensorGroupsAndLanesFollowTheGraph() {
        NameTable names = new NameTable();
        OperatorAggregator aggregator = new OperatorAggregator(NAMING, names);
        long t0 = 1_000_000_000L; // a cell boundary
        new GraphFixture(aggregator).node(1, t0, 0, 0xa, 1, 0, 64, 32, 1, 1, 0, 0, 0, intern(names, "Kcur-3"));
        new GraphFixture(aggregator).node(1, t0, 1, 0xb, 2, 0, 64, 1, 1, 1, 0, 0, 0, intern(names, "ffn_norm-3"));
        arrivals(aggregator, 101, 1, t0, t0 + 40_000_000L, t0 + 110_000_000L);
        arrivals(aggregator, 102, 1, t0, t0 + 50_000_000L, t0 + 110_000_000L);
        aggregator.graphs().finishGraph();

        var interval = aggregator.interval(List.of());
        List<OpTotals> ops = interval.ops();
        List<OpTotals> groups = interval.tensorGroups();
        assertEquals(List.of("RMS_NORM", "MUL_MAT"), ops.stream().map(OpTotals::op).toList());
        assertEquals(List.of("blk.3 ffn", "blk.3 attention"), groups.stream().map(OpTotals::op).toList());
        OpTotals attention = groups.get(1);
        assertEquals(50_000_000L, attention.wallNs());
        assertEquals(90_000_000L, attention.workNs());
        assertEquals(10_000_000L, attention.waitNs());
        assertEquals("Kcur-3 [64,32,1,1]", attention.lastShape());
        assertEquals(50.0, attention.distribution().valueMs(attention.distribution().size() - 1), 0.1);

        List<ThreadLane> lanes = aggregator.lanes(t0 + 149_000_000L);
        assertEquals(2, lanes.size());
        ThreadLane first = lanes.get(0);
        assertEquals(101, first.tid());
        assertEquals("RMS_NORM", first.currentOp());
        int n = first.cellCount();
        assertEquals(OpClass.MATMUL, first.cellClass(n - 3)); // [0,50): 40 ms matmul, 10 ms wait
        assertEquals(OpClass.NORM, first.cellClass(n - 2));   // [50,100): norm
        assertEquals(OpClass.NORM, first.cellClass(n - 1));   // [100,150): 10 ms norm, then idle
        assertEquals(ThreadLane.IDLE, first.cell(n - 4));
    }

    @Test
    void waitDominatesALaneCellWhenTheThreadMostlyWaits() {
        NameTable names = new NameTable();
        OperatorAggregator aggregator = new OperatorAggregator(NAMING, names);
        long t0 = 2_000_000_000L;
        new GraphFixture(aggregator).node(7, t0, 0, 0xa, 1, 0, 1, 1, 1, 1, 0, 0, 0, intern(names, "result_output"));
        arrivals(aggregator, 1, 7, t0, t0 + 10_000_000L);
        arrivals(aggregator, 2, 7, t0, t0 + 45_000_000L);
        aggregator.graphs().finishGraph();
        List<ThreadLane> lanes = aggregator.lanes(t0 + 1);
        assertEquals(ThreadLane.WAIT, lanes.get(0).cell(lanes.get(0).cellCount() - 1));
        assertEquals((byte) OpClass.MATMUL.ordinal(), lanes.get(1).cell(lanes.get(1).cellCount() - 1));
        assertEquals("in/out", aggregator.interval(List.of()).tensorGroups().getFirst().op());
    }
}
