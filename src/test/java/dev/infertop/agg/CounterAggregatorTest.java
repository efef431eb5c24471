package dev.infertop.agg;

import dev.infertop.event.CounterDeltas;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.model.CounterEvent;
import dev.infertop.model.CounterSet;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.OpCounters;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Counter deltas reach the op the operator layer gives their node group, scaled by the record's
 * enabled / running time, with migrated groups left out: the same hand-made graph as OperatorAggregatorTest.
 */
class CounterAggregatorTest {
    private static final int NONE = 0, ADD = 1, MUL_MAT = 3;
    private static final List<String> NAMES = List.of("NONE", "ADD", "MUL", "MUL_MAT");

    private final OpNaming naming = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return NAMES.get(op);
        }

        @Override
        public boolean isEmpty(int op) {
            return op == NONE;
        }

        @Override
        public int computeFlag() {
            return 0;
        }
    };

    private final OperatorAggregator operators = new OperatorAggregator(naming, new NameTable());
    private final CounterAggregator counters = new CounterAggregator();

    CounterAggregatorTest() {
        operators.graphs().addListener(counters);
        CounterSet set = new CounterSet("test", "any", 64, List.of(CounterEvent.parse("refills=cache-misses"),
                CounterEvent.parse("instructions=instructions"), CounterEvent.parse("cycles=cycles")));
        counters.configure(set, set.events());
    }

    /** Groups: 1 MUL_MAT, 2 ADD, 3 MUL_MAT. */
    private void graph(long seq) {
        int[] ops = {MUL_MAT, ADD, MUL_MAT};
        for (int i = 0; i < ops.length; i++) {
            new GraphFixture(operators).node(seq, 0, i, 0x1000 + i, ops[i], 0, 8, 1, 1, 1, 0, 0, 0, -1);
        }
    }

    private void arrivals(int tid, long seq, long startNs, long... times) {
        new GraphFixture(operators).arrivals(tid, seq, startNs, times);
    }

    /** An EVENT_COUNTERS record as the probes write it: deltas[group][event], one running/enabled per event. */
    private void record(int tid, long seq, long[][] deltas, long[] enabled, long[] running, int... migrated) {
        recordSwitched(tid, seq, deltas, enabled, running, new int[0], migrated);
    }

    private void recordSwitched(int tid, long seq, long[][] deltas, long[] enabled, long[] running, int[] switched,
                                int... migrated) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(EventLayout.COUNTERS_SIZE, 8);
            data.set(ValueLayout.JAVA_INT, EventLayout.HEADER_KIND, EventLayout.EVENT_COUNTERS);
            data.set(ValueLayout.JAVA_LONG, EventLayout.COUNTERS_GRAPH_SEQ, seq);
            data.set(ValueLayout.JAVA_INT, EventLayout.COUNTERS_COUNT, deltas.length);
            for (int e = 0; e < enabled.length; e++) {
                data.set(ValueLayout.JAVA_LONG, EventLayout.COUNTERS_ENABLED + 8L * e, enabled[e]);
                data.set(ValueLayout.JAVA_LONG, EventLayout.COUNTERS_RUNNING + 8L * e, running[e]);
            }
            for (int k : switched) {
                long at = EventLayout.COUNTERS_SWITCHED_BITS + 4L * (k / 32);
                data.set(ValueLayout.JAVA_INT, at, data.get(ValueLayout.JAVA_INT, at) | 1 << (k % 32));
            }
            for (int k : migrated) {
                long at = EventLayout.COUNTERS_MIGRATED_BITS + 4L * (k / 32);
                data.set(ValueLayout.JAVA_INT, at, data.get(ValueLayout.JAVA_INT, at) | 1 << (k % 32));
            }
            for (int k = 0; k < deltas.length; k++) {
                for (int e = 0; e < deltas[k].length; e++) {
                    data.set(ValueLayout.JAVA_LONG,
                            EventLayout.COUNTERS_DELTA + 8L * (k * EventLayout.MAX_COUNTER_EVENTS + e), deltas[k][e]);
                }
            }
            counters.onCounters(tid, seq, CounterDeltas.ofRecord(data));
        }
    }

    private Map<String, OpCounters> ops(CounterTotals totals) {
        return totals.ops().stream().collect(Collectors.toMap(OpCounters::op, Function.identity()));
    }

    @Test
    void deltasGoToTheirGroupsOpScaledAndMigratedGroupsLeftOut() {
        graph(1);
        // Thread 7 starts at 0, arrives at 100, 130, 200 (and 210 after the loop). Its refills were on the PMU
        // half the time (x2); instructions and cycles all the time.
        arrivals(7, 1, 0, 100, 130, 200, 210);
        // It was switched out during group 3 (MUL_MAT): counted, and marked.
        recordSwitched(7, 1, new long[][] {{10, 1000, 500}, {1, 40, 40}, {20, 3000, 1000}},
                new long[] {200, 200, 200}, new long[] {100, 200, 200}, new int[] {2});
        // Thread 8 starts at 10, arrives at 120, 125, 190; it changed CPU during group 2 (ADD).
        arrivals(8, 1, 10, 120, 125, 190, 210);
        record(8, 1, new long[][] {{5, 2000, 1000}, {0, 0, 0}, {1, 500, 500}},
                new long[] {180, 180, 180}, new long[] {180, 180, 180}, 1);
        operators.finishLastGraph();
        CounterTotals interval = counters.interval(1_000, Map.of("MUL_MAT", 190L, "ADD", 10L));
        Map<String, OpCounters> ops = ops(interval);

        OpCounters matmul = ops.get("MUL_MAT");
        assertEquals(4, matmul.groups(), "2 groups x 2 threads");
        assertEquals(0, matmul.migratedGroups());
        assertEquals(1, matmul.switchedGroups());
        // refills: thread 7 (10 + 20) x 2 = 60, thread 8 5 + 1 = 6
        assertEquals(List.of(66L, 1000L + 3000 + 2000 + 500, 500L + 1000 + 1000 + 500), matmul.values());
        // counted stretches: thread 7 0→100 and 130→200, thread 8 10→120 and 125→190
        assertEquals(100 + 70 + 110 + 65, matmul.countedNs());
        assertEquals(190, matmul.wallNs());
        assertEquals(6500.0 / 3000, interval.ipc(matmul), 1e-12);
        assertEquals(66 * 1000.0 / 6500, interval.refillsPerKiloInstruction(matmul), 1e-12);
        assertEquals(66 * 64 * 1e9 / 190, interval.refillBytesPerSecond(matmul), 1e-3);

        OpCounters add = ops.get("ADD");
        assertEquals(1, add.groups(), "thread 8's ADD moved CPU: left out");
        assertEquals(1, add.migratedGroups());
        assertEquals(List.of(2L, 40L, 40L), add.values());
        assertEquals(30, add.countedNs());

        assertEquals(5, interval.countedGroups());
        assertEquals(1, interval.migratedGroups());
        assertEquals(1, interval.switchedGroups());
        assertEquals(0, add.switchedGroups());
        assertEquals(List.of(68L, 6540L, 3040L), interval.values());
        assertEquals(List.of("cache-misses", "instructions", "cycles"), interval.events());
        // the interval's refill bandwidth: 68 x 64 B over 1000 ns
        assertEquals(List.of(68 * 64 * 1e9 / 1000), interval.bandwidthHistory());
    }

    @Test
    void aRecordCountsOnlyForItsOwnGraphAndIntervalsReset() {
        graph(1);
        arrivals(7, 1, 0, 100, 130, 200);
        record(7, 99, new long[][] {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, new long[] {1, 1, 1}, new long[] {1, 1, 1});
        operators.finishLastGraph();
        assertEquals(List.of(), counters.interval(1_000, Map.of()).ops(), "graph 99's counters are not graph 1's");

        graph(2);
        arrivals(7, 2, 0, 100, 130, 200);
        record(7, 2, new long[][] {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, new long[] {1, 1, 1}, new long[] {1, 1, 1});
        operators.finishLastGraph();
        assertEquals(3, counters.interval(1_000, Map.of()).countedGroups());
        assertEquals(3, counters.totals(2_000, Map.of()).countedGroups());
        assertEquals(0, counters.interval(1_000, Map.of()).countedGroups());
        assertEquals(3, counters.totals(3_000, Map.of()).countedGroups());
    }

    @Test
    void nothingWhileNoEventIsOpen() {
        counters.configure(null, List.of());
        assertEquals(CounterTotals.EMPTY, counters.interval(1_000, Map.of()));
    }
}
