package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.OpCounts;
import dev.infertop.event.BatchTokens;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.history.FlightRecorder;
import dev.infertop.model.BackendNames;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.Interferer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Limits;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Other;
import dev.infertop.model.RunState;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.ThreadTotals;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target (and a machine) that choose every key anew: a new backend GUID per graph compute, a new thread per
 * decode, ten thousand interfering pids, op ids past the op table, a new llama_context per call. Every table
 * stays at its cap, the keys kept plus "other" add up to the totals fed in, and the limits count exactly what
 * went past each cap.
 */
class HostileKeysTest {
    private static final int MUL_MAT = 0;
    private static final int COMPUTE = 16;
    private static final TargetInfo TARGET = new TargetInfo(1, "hostile", null, List.of());
    private static final List<LayerStatus> LAYERS = List.of();

    private static Snapshot tick(TraceAggregator aggregator, long nowNs) {
        return aggregator.snapshot(nowNs, RunState.RUNNING, TARGET, 0, LAYERS);
    }

    @Test
    void aNewBackendGuidPerComputeFor100kComputesKeepsSixteenAndFoldsTheRest() {
        int computes = 100_000;
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), null);
        BackendOpsAggregator backendOps = new BackendOpsAggregator(aggregator.backendKeys(), null);
        aggregator.register(backendOps);
        FlightRecorder flight = new FlightRecorder(1 << 12, 1_000_000_000L);
        aggregator.keepForSnapshots(flight, null);
        int labelsBefore = flight.label("a label made before the computes");
        aggregator.start(0);
        long clock = 1_000;
        int[] opCounts = new int[BackendOpsAggregator.OP_SLOTS];
        opCounts[3] = 2;
        Snapshot s = null;
        for (int i = 0; i < computes; i++) {
            long guidHigh = 0x1000L + i;
            long guidLow = ~(long) i;
            backendOps.onBackendOps(9, guidHigh, guidLow, OpCounts.of(opCounts));
            aggregator.onGraphCompute(9, clock, clock + 100, 0xb000, guidHigh, guidLow, 2, 0);
            clock += 200;
            if (i % 10_000 == 9_999) {
                s = tick(aggregator, clock);
            }
        }

        List<BackendTotals> backends = s.total().backends();
        assertEquals(BackendKeys.MAX_BACKENDS + 1, backends.size(), "sixteen GUIDs and other");
        assertEquals(Other.NAME, backends.getLast().backend());
        assertEquals(computes, backends.stream().mapToLong(BackendTotals::computes).sum(), "kept + other = all");
        assertEquals(2L * computes, backends.stream().mapToLong(BackendTotals::nodes).sum());
        assertEquals(100L * computes, backends.stream().mapToLong(BackendTotals::busyNs).sum());
        assertEquals(computes - BackendKeys.MAX_BACKENDS, backends.getLast().computes());
        // The interval too: the last 10 000 computes, all of new GUIDs.
        assertEquals(10_000, s.interval().backends().stream().mapToLong(BackendTotals::computes).sum());
        assertEquals(10_000, s.interval().backends().getLast().computes());
        // The backends' op counts keep the same sixteen: they share the keys.
        List<BackendOps> ops = s.total().backendOps();
        assertEquals(BackendKeys.MAX_BACKENDS + 1, ops.size());
        assertEquals(computes, ops.stream().mapToLong(BackendOps::graphs).sum());
        assertEquals(backends.stream().map(BackendTotals::backend).toList(),
                ops.stream().map(BackendOps::backend).toList());

        Limits limits = s.limits();
        assertEquals(BackendKeys.MAX_BACKENDS, limits.value("backends"));
        assertEquals(BackendKeys.MAX_BACKENDS, limits.value("backends_cap"));
        assertEquals(computes - BackendKeys.MAX_BACKENDS, limits.value("backend_computes_folded"));
        assertEquals(computes - BackendKeys.MAX_BACKENDS, limits.droppedTotal());
        // The flight recorder named one label per backend kept, and one for "other": not one per GUID.
        assertEquals(labelsBefore + BackendKeys.MAX_BACKENDS + 2, flight.label("a label made after them"));
    }

    /** One graph of one MUL_MAT node, run by thread {@code tid} (its one arrival after the loop). */
    private static void graph(GraphFixture graphs, long seq, int tid, long startNs) {
        graphs.node(seq, startNs, 0, 0x10_0000L, MUL_MAT, COMPUTE, 8, 1, 1, 1, 0, 0, 0, -1);
        graphs.arrivals(tid, seq, startNs, startNs + 1_000);
    }

    @Test
    void aNewThreadPerDecodeIsPrunedOnceItExitedAndTheTotalsStayWhole() {
        int perTick = 80;
        int ticks = 125; // 10 000 threads, each one decode (a graph) and two switches
        Set<Integer> alive = new HashSet<>();
        ThreadSlots slots = new ThreadSlots(tid -> !alive.contains(tid));
        NameTable names = new NameTable();
        OperatorAggregator operators = new OperatorAggregator(
                GraphFixture.naming(List.of("MUL_MAT"), COMPUTE, Set.of()), names, slots);
        SchedAggregator sched = new SchedAggregator(1, names, () -> 0, slots);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), operators, sched);
        GraphFixture graphs = new GraphFixture(operators);
        aggregator.start(0);
        long clock = 1_000_000;
        int tid = 1000;
        long seq = 0;
        Snapshot s = null;
        for (int t = 0; t < ticks; t++) {
            alive.clear(); // every thread exits in the tick it was started in
            for (int i = 0; i < perTick; i++, tid++) {
                alive.add(tid);
                sched.onSchedOff(tid, clock, clock + 300, clock + 100, 50, false); // sleeping 100, runnable 200
                sched.onSchedOff(tid, clock + 400, clock + 500, 0, 100, true);    // runnable 100
                graph(graphs, ++seq, tid, clock);
                clock += 10_000;
            }
            graphs.graphs().finishGraph();
            alive.clear();
            s = tick(aggregator, clock);
            assertTrue(slots.held() <= 3 * perTick, "threads held after tick " + t + ": " + slots.held());
            assertTrue(s.total().operators().threads().size() <= ThreadSlots.MAX_THREADS + 1);
            assertTrue(s.total().sched().threads().size() <= ThreadSlots.MAX_THREADS + 1);
        }
        int threads = perTick * ticks;

        // Run totals: every thread's figures, the pruned ones' under "other".
        List<SchedThreadTotals> schedThreads = s.total().sched().threads();
        assertEquals(Other.TID, schedThreads.getLast().tid());
        assertEquals(150L * threads, schedThreads.stream().mapToLong(SchedThreadTotals::runningNs).sum());
        assertEquals(300L * threads, schedThreads.stream().mapToLong(SchedThreadTotals::runnableNs).sum());
        assertEquals(100L * threads, schedThreads.stream().mapToLong(SchedThreadTotals::sleepingNs).sum());
        assertEquals(2L * threads, schedThreads.stream().mapToLong(SchedThreadTotals::switches).sum());
        List<ThreadTotals> opThreads = s.total().operators().threads();
        assertEquals(Other.TID, opThreads.getLast().tid());
        assertEquals(threads, opThreads.stream().mapToLong(ThreadTotals::groups).sum());
        assertEquals(1_000L * threads, opThreads.stream().mapToLong(ThreadTotals::workNs).sum());
        assertEquals(threads, s.total().operators().threadGroups());
        // The last interval: its own 80 threads, none folded into it by the pruning between ticks.
        assertEquals(2L * perTick, s.interval().sched().threads().stream().mapToLong(SchedThreadTotals::switches).sum());
        assertEquals(perTick, s.interval().operators().threads().stream().mapToLong(ThreadTotals::groups).sum());

        // Threads are pruned between ticks, once unseen for 3: the last snapshot holds its own tick's threads and
        // the two before's, and every earlier one was pruned.
        Limits limits = s.limits();
        assertEquals((long) (ticks - 3) * perTick, limits.value("threads_pruned"));
        assertEquals(3L * perTick, limits.value("threads"));
        assertEquals(ThreadSlots.MAX_THREADS, limits.value("threads_cap"));
        assertEquals(0, limits.value("thread_records_folded"), "pruning kept it under the cap");
        assertEquals(0, limits.droppedTotal(), "threads that exited are housekeeping, not a cap");
    }

    @Test
    void livingThreadsPastTheCapAreCountedUnderOther() {
        int living = ThreadSlots.MAX_THREADS + 44;
        ThreadSlots slots = new ThreadSlots(); // nobody exits
        SchedAggregator sched = new SchedAggregator(1, new NameTable(), () -> 0, slots);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), null, sched);
        aggregator.start(0);
        for (int round = 0; round < 3; round++) {
            for (int tid = 1; tid <= living; tid++) {
                sched.onSchedOff(tid, 1_000L * tid, 1_000L * tid + 700, 0, 10, true);
            }
        }
        Snapshot s = tick(aggregator, 10_000_000);
        List<SchedThreadTotals> rows = s.total().sched().threads();
        assertEquals(ThreadSlots.MAX_THREADS + 1, rows.size());
        assertEquals(3L * 44, rows.getLast().switches(), "the 44 threads past the cap, three switches each");
        assertEquals(3L * living, rows.stream().mapToLong(SchedThreadTotals::switches).sum());
        assertEquals(3L * 700 * living, rows.stream().mapToLong(SchedThreadTotals::runnableNs).sum());
        assertEquals(ThreadSlots.MAX_THREADS, s.limits().value("threads"));
        assertEquals(3L * 44, s.limits().value("thread_records_folded"));
        assertEquals(3L * 44, s.limits().droppedTotal());
    }

    @Test
    void tenThousandInterferingPidsKeepTheCapAndSumTheRestAsOther() {
        int pids = 10_000;
        NameTable names = new NameTable();
        SchedAggregator sched = new SchedAggregator(1, names, () -> 0);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), null, sched);
        aggregator.start(0);
        long fed = 0;
        long fedInLastInterval = 0;
        Snapshot s = null;
        for (int pid = 100; pid < 100 + pids; pid++) {
            long ns = 1_000 + pid % 97; // unequal, so that eviction picks among different times
            sched.onSchedCulprit(7, ns, pid, pid, -1);
            fed += ns;
            fedInLastInterval += ns;
            if (pid % 1000 == 99) {
                s = tick(aggregator, pid * 1_000L);
                assertSum(fedInLastInterval, s.interval().sched());
                fedInLastInterval = 0;
            }
        }
        // A heavy interferer among them is listed, with all its time: the light ones gave their places.
        sched.onSchedCulprit(7, 5_000_000, 42, 42, -1);
        sched.onSchedCulprit(7, 5_000_000, 42, 42, -1);
        fed += 10_000_000;
        s = tick(aggregator, 1L << 40);
        SchedTotals total = s.total().sched();
        assertSum(fed, total);
        assertEquals(SchedAggregator.TOP_INTERFERERS, total.interferers().size());
        Interferer worst = total.worstInterferer();
        assertEquals(42, worst.pid());
        assertEquals(10_000_000, worst.ns());
        Limits limits = s.limits();
        assertEquals(SchedAggregator.MAX_INTERFERERS, limits.value("interferers"));
        assertEquals(pids + 1 - SchedAggregator.MAX_INTERFERERS, limits.value("interferers_folded"),
                "each pid past the cap made one give its place");
        assertEquals(SchedAggregator.MAX_INTERFERERS, limits.value("interferers_cap"));
    }

    private static void assertSum(long expectedNs, SchedTotals sched) {
        assertEquals(expectedNs, sched.interferersNs(), "listed + other = every task's time");
        assertEquals(expectedNs, sched.interferers().stream().mapToLong(Interferer::ns).sum()
                + sched.otherInterferersNs());
    }

    @Test
    void opIdsBeyondTheTableAreNamedUpToTheCapAndTheRestCountedAsOther() {
        int graphs = 1000;
        int nodes = 8; // a new op id per node: 8000 names ("op1000", "op1001", ...)
        NameTable names = new NameTable();
        OperatorAggregator operators = new OperatorAggregator(
                GraphFixture.naming(List.of("MUL_MAT"), COMPUTE, Set.of()), names);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), operators);
        GraphFixture fixture = new GraphFixture(operators);
        aggregator.start(0);
        long clock = 1_000_000;
        int op = 1000;
        for (int g = 1; g <= graphs; g++) {
            long[] arrivals = new long[nodes];
            for (int i = 0; i < nodes; i++) {
                fixture.node(g, clock, i, 0x10_0000L + i, op++, COMPUTE, 8, 1, 1, 1, 0, 0, 0, -1);
                arrivals[i] = clock + 100L * (i + 1);
            }
            fixture.arrivals(7, g, clock, arrivals);
            clock += 10_000;
        }
        fixture.finish();
        Snapshot s = tick(aggregator, clock);
        List<OpTotals> ops = s.total().operators().ops();
        assertEquals(CpuGraphAssemblerCap.MAX + 1, ops.size(), "the names kept and other");
        assertEquals((long) graphs * nodes, ops.stream().mapToLong(OpTotals::groups).sum(), "kept + other = all");
        assertEquals(800L * graphs, ops.stream().mapToLong(OpTotals::wallNs).sum());
        OpTotals other = ops.stream().filter(o -> o.op().equals(Other.NAME)).findFirst().orElseThrow();
        long folded = (long) graphs * nodes - CpuGraphAssemblerCap.MAX;
        assertEquals(folded, other.groups());
        Limits limits = s.limits();
        assertEquals(CpuGraphAssemblerCap.MAX, limits.value("op_names"));
        assertEquals(folded, limits.value("op_groups_folded"));
        assertEquals(folded, limits.droppedTotal());
    }

    /** The op-name cap as the assembler states it. */
    private static final class CpuGraphAssemblerCap {
        static final int MAX = CpuGraphAssembler.MAX_OP_NAMES;
    }

    @Test
    void aNewContextPerCallIsFollowedUpToTheCapAndCountedByItsSizeAfter() {
        int contexts = 1000;
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), null);
        aggregator.start(0);
        Arena arena = Arena.ofAuto();
        long clock = 1_000;
        for (int c = 0; c < contexts; c++) {
            long context = 0x7000_0000L + 0x1000L * c;
            // A two-token prompt, at positions of its own (the same tokens in another context would be a draft
            // model's copy of the batch).
            BatchTokens batch = BatchTokens.builder(2).add(2 * c, 0, 0, 1).add(2 * c + 1, 0, 1, 1).build();
            Routers.tokens(aggregator).onBatch(7, clock, clock + 100, context, 2, batch);
            Routers.tokens(aggregator).onDecode(7, clock, clock + 100, context, 2, 0);
            clock += 1_000;
        }
        Snapshot s = tick(aggregator, clock);
        // Every call's prompt counted: per request in a context followed, by the call's size past the cap.
        assertEquals(2L * contexts, s.total().tokens().tokensPrefill());
        assertEquals(SequenceTracker.MAX_CONTEXTS, s.total().tokens().requests(), "requests of followed contexts");
        assertEquals(contexts, s.total().tokens().decodeCalls());
        Limits limits = s.limits();
        assertEquals(SequenceTracker.MAX_CONTEXTS, limits.value("contexts"));
        assertEquals(contexts - SequenceTracker.MAX_CONTEXTS, limits.value("context_batches_unfollowed"));
    }

    @Test
    void everyLimitsFieldIsInTheManPage() throws Exception {
        // Every layer whose tables are bounded, as a traced process has them (the operator layer's and MoE's too).
        NameTable names = new NameTable();
        OpNaming naming = GraphFixture.naming(List.of("MUL_MAT"), COMPUTE, Set.of());
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), new OperatorAggregator(naming, names),
                new SchedAggregator(1, names, () -> 0)).withNames(names);
        aggregator.register(new MoeAggregator(naming, names, (signature, groups, ids, layers) -> true));
        Snapshot s = tick(aggregator, 1);
        String man = java.nio.file.Files.readString(java.nio.file.Path.of("man/infertop.1"));
        String limits = man.substring(man.indexOf("\n.B limits\n"), man.indexOf("\n.B layers\n"));
        assertTrue(s.limits().fields().size() >= 30, s.limits().fields().toString());
        for (String field : s.limits().fields()) {
            assertTrue(limits.contains("\\fB" + field.replace("_", "\\_") + "\\fR")
                            || limits.contains("\\fB" + field + "\\fR"),
                    "man/infertop.1 (JSON FIELDS, limits) does not document " + field);
        }
    }
}
