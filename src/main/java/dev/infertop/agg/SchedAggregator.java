package dev.infertop.agg;

import dev.infertop.model.Limits;
import dev.infertop.model.Other;
import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.history.SchedTimeline;
import dev.infertop.model.Figures;
import dev.infertop.model.Interferer;
import dev.infertop.model.Layer;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Folds the sched layer's records into thread states, per-op off-CPU time and interferers.
 *
 * <p>One off-CPU stretch of a thread, [off, on], splits so:
 * <pre>
 *   preempted:            runnable = on - off                         (never stopped wanting the CPU)
 *   slept, wake-up seen:  sleeping = wake - off, runnable = on - wake (woken, then waited for a CPU)
 *   slept, no wake-up:    sleeping = on - off                         (woken before the layer attached)
 * </pre>
 * Per op: each thread's node groups, [begin, release] from the operator layer, overlap its recent
 * stretches; the overlap with each part goes to the group's op. Groups of a graph are attributed after the
 * graph ends, so every stretch inside them has arrived by then (a thread must be back on a CPU to reach the
 * barrier). Single writer: the collector thread.
 */
public final class SchedAggregator implements LayerAggregator, CpuGraphListener, ThreadSlots.Listener {
    /** Off-CPU stretches kept per thread for the per-op join (a graph of a tiny model spans a few). */
    static final int RECENT_STRETCHES = 512;
    /** Interferers listed per span; the rest are summed as "other" ({@link SchedTotals#otherInterferersNs}). */
    public static final int TOP_INTERFERERS = 10;
    /**
     * Interferers kept, by pid: other processes choose their pids (a build forks thousands), so the one that ran
     * least so far gives its place to a new one, its time summed under "other" (a pid that came back starts
     * again). Many more than are listed, so that the listed ones' times are whole in any ordinary run.
     */
    public static final int MAX_INTERFERERS = 64;

    private final int targetPid;
    private final NameTable names;
    private final LongSupplier kernelHits;
    /** Per thread slot ({@link ThreadSlots}); the last is "other" (no stretches: it joins no op). */
    private final ThreadSlots threadSlots;
    private final ThreadState[] threads = new ThreadState[ThreadSlots.MAX_THREADS + 1];
    private boolean anyThread;
    // Counters kept once, for the run; an interval is the difference from the sample its start took.
    /** Per op: {runnable, sleeping} for the run, then the same at the interval's start. */
    private final Map<String, long[]> opTotals = new LinkedHashMap<>();
    private final Map<Integer, Culprit> culprits = new HashMap<>();
    /** The interferers' time that is not under a pid of {@link #culprits}: those that gave their place. */
    private final Counts otherCulprits = new Counts(1);
    private long interferersFolded;
    private static final int OFF_RECORDS = 0;
    private static final int CULPRIT_RECORDS = 1;
    private final Counts records = new Counts(2);
    private long hitsAtIntervalStart;

    /**
     * @param targetPid  the traced process (its own threads are marked as such among the interferers)
     * @param names      the decoder's name table (culprits' comm)
     * @param kernelHits the handlers' run count so far, machine-wide (0 when unknown)
     */
    public SchedAggregator(int targetPid, NameTable names, LongSupplier kernelHits) {
        this(targetPid, names, kernelHits, new ThreadSlots());
    }

    /** @param threadSlots the target's threads, shared with the other layers that keep figures per thread */
    public SchedAggregator(int targetPid, NameTable names, LongSupplier kernelHits, ThreadSlots threadSlots) {
        this.targetPid = targetPid;
        this.names = names;
        this.kernelHits = kernelHits;
        this.threadSlots = threadSlots;
        threadSlots.addListener(this);
    }

    /** The thread slots this layer keys its per-thread figures by. */
    @Override
    public ThreadSlots threadSlots() {
        return threadSlots;
    }

    /** A thread exited: its counts go to the "other" row, its stretches are dropped, its slot is freed. */
    @Override
    public void foldIntoOther(int slot) {
        ThreadState gone = threads[slot];
        if (gone == null) {
            return;
        }
        otherThread().counts.addAll(gone.counts);
        threads[slot] = null;
    }

    private ThreadState otherThread() {
        ThreadState other = threads[ThreadSlots.OTHER];
        if (other == null) {
            other = threads[ThreadSlots.OTHER] = new ThreadState(Other.TID, 0);
        }
        return other;
    }

    private static final class ThreadState {
        static final int RUNNING_NS = 0, RUNNABLE_NS = 1, SLEEPING_NS = 2, SWITCHES = 3, PREEMPTIONS = 4;
        final int tid;
        final Counts counts = new Counts(5);
        // Recent stretches, oldest first from `first`: [off, wake or off, on] with wake = off when preempted.
        final long[] off;
        final long[] wake;
        final long[] on;
        long first;
        long next;

        ThreadState(int tid, int stretches) {
            this.tid = tid;
            off = new long[stretches];
            wake = new long[stretches];
            on = new long[stretches];
        }
    }

    private static final class Culprit {
        final int pid;
        String comm;
        final Counts ns = new Counts(1);

        Culprit(int pid, String comm) {
            this.pid = pid;
            this.comm = comm;
        }
    }

    public void onSchedOff(int tid, long offNs, long onNs, long wakeNs, long ranNs, boolean preempted) {
        int threadSlot = threadSlots.slotOf(tid);
        ThreadState thread = threads[threadSlot];
        if (thread == null) {
            thread = threadSlot == ThreadSlots.OTHER ? otherThread()
                    : (threads[threadSlot] = new ThreadState(tid, RECENT_STRETCHES));
            anyThread = true;
        }
        long wakeAt = wakeAt(offNs, onNs, wakeNs, preempted);
        long sleepingNs = wakeAt - offNs;
        long runnableNs = Math.max(0, onNs - wakeAt);
        thread.counts.add(ThreadState.RUNNING_NS, ranNs);
        thread.counts.add(ThreadState.RUNNABLE_NS, runnableNs);
        thread.counts.add(ThreadState.SLEEPING_NS, sleepingNs);
        thread.counts.add(ThreadState.SWITCHES, 1);
        if (preempted) {
            thread.counts.add(ThreadState.PREEMPTIONS, 1);
        }
        if (thread.off.length > 0) {
            int slot = (int) (thread.next % RECENT_STRETCHES);
            thread.off[slot] = offNs;
            thread.wake[slot] = wakeAt;
            thread.on[slot] = onNs;
            thread.next++;
            if (thread.next - thread.first > RECENT_STRETCHES) {
                thread.first = thread.next - RECENT_STRETCHES;
            }
        }
        records.add(OFF_RECORDS, 1);
        if (timeline != null) {
            timeline.onSchedOff(tid, offNs, onNs, wakeAt, ranNs);
        }
    }

    /** When the thread started waiting for a CPU: at once when preempted, else at its wake-up (if seen). */
    static long wakeAt(long offNs, long onNs, long wakeNs, boolean preempted) {
        return preempted ? offNs : (wakeNs < offNs || wakeNs > onNs ? onNs : wakeNs);
    }

    private SchedTimeline timeline;

    /** Records thread states into {@code flight} from now on (null: stop). */
    public void keepForSnapshots(FlightRecorder flight) {
        timeline = flight == null ? null : new SchedTimeline(flight);
    }

    public void onSchedCulprit(int tid, long ns, int pid, int tgid, int commId) {
        Culprit culprit = culprits.get(tgid);
        String comm = names.name(commId);
        if (culprit == null) {
            if (culprits.size() >= MAX_INTERFERERS) {
                foldLeastInterferer();
            }
            culprit = new Culprit(tgid, comm);
            culprits.put(tgid, culprit);
        } else {
            culprit.comm = comm;
        }
        culprit.ns.add(0, ns);
        if (timeline != null) {
            timeline.onCulprit(tid, ns, tgid, comm);
        }
        records.add(CULPRIT_RECORDS, 1);
    }

    /**
     * Makes room for a new interferer: the one that ran least over the run (not the target itself) gives its
     * place, its time summed under "other". A scan of {@link #MAX_INTERFERERS}, only when a new pid comes.
     */
    private void foldLeastInterferer() {
        Culprit least = null;
        for (Culprit c : culprits.values()) {
            if (c.pid != targetPid && (least == null || c.ns.total(0) < least.ns.total(0))) {
                least = c;
            }
        }
        if (least == null) {
            return;
        }
        otherCulprits.addAll(least.ns);
        culprits.remove(least.pid);
        interferersFolded++;
    }

    /** Pids that gave their place among the interferers, their time summed under "other" (each time one did). */
    public long interferersFolded() {
        return interferersFolded;
    }

    /** This layer's bounded tables in the snapshot's limits (its threads are {@link ThreadSlots}'). */
    @Override
    public java.util.List<Limits.Bound> bounds() {
        return java.util.List.of(interferersBound());
    }

    public Limits.Bound interferersBound() {
        return Limits.Bound.of("interferers", culprits.size(), "interferers_cap", MAX_INTERFERERS,
                Limits.Past.capped("interferers_folded", interferersFolded));
    }

    /** Each attributed graph's groups, per thread: a thread's off-CPU time within a group goes to its op. */
    @Override
    public void onGraph(CpuGraph graph) {
        if (!graph.attributed() || !anyThread) {
            return; // sched layer off (or no switch seen yet): skip the boxed lookups, ~550 a token
        }
        String[] opNames = graph.groupOpNames();
        for (int k = 0; k < graph.groupCount(); k++) {
            for (int t = 0; t < graph.threadCount(); t++) {
                long begin = graph.workBeginNs(t, k);
                onGroup(graph.tid(t), opNames[k], begin, Math.max(begin, graph.releaseNs(k)));
            }
        }
    }

    /** One node group of thread {@code tid}, [beginNs, endNs]: its off-CPU time goes to {@code op}. */
    void onGroup(int tid, String op, long beginNs, long endNs) {
        if (!anyThread) {
            return; // sched layer off (or no switch seen yet): skip the lookup, ~550 a token
        }
        int threadSlot = threadSlots.find(tid);
        ThreadState thread = threadSlot < 0 ? null : threads[threadSlot];
        if (thread == null || thread.off.length == 0 || endNs <= beginNs) {
            return;
        }
        // Groups of a thread come in time order: stretches over before this one starts are not needed again.
        while (thread.first < thread.next && thread.on[(int) (thread.first % RECENT_STRETCHES)] <= beginNs) {
            thread.first++;
        }
        long runnable = 0;
        long sleeping = 0;
        for (long i = thread.first; i < thread.next; i++) {
            int slot = (int) (i % RECENT_STRETCHES);
            if (thread.off[slot] >= endNs) {
                break;
            }
            sleeping += overlap(thread.off[slot], thread.wake[slot], beginNs, endNs);
            runnable += overlap(thread.wake[slot], thread.on[slot], beginNs, endNs);
        }
        if (runnable == 0 && sleeping == 0) {
            return;
        }
        long[] total = opTotals.computeIfAbsent(op, o -> new long[4]);
        total[0] += runnable;
        total[1] += sleeping;
    }

    static long overlap(long from, long to, long begin, long end) {
        return Math.max(0, Math.min(to, end) - Math.max(from, begin));
    }

    @Override
    public Layer layer() {
        return Layer.SCHED;
    }

    /** The sched layer's two records, as the decoder reads them. */
    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onSchedOff(int tid, long offNs, long onNs, long wakeNs, long ranNs, int cpuOut, int cpuIn,
                               boolean preempted) {
            SchedAggregator.this.onSchedOff(tid, offNs, onNs, wakeNs, ranNs, preempted);
        }

        @Override
        public void onSchedCulprit(int tid, long waitStartNs, long waitEndNs, long ns, int pid, int tgid, int cpu,
                                   int commId) {
            SchedAggregator.this.onSchedCulprit(tid, ns, pid, tgid, commId);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_SCHED_OFF || kind == EventLayout.EVENT_SCHED_CULPRIT ? decoded : null;
    }

    /** Its figures per op: what each graph's threads were doing off the CPU (the graphs' op names). */
    @Override
    public void followGraphs(CpuGraphAssembler graphs) {
        graphs.addListener(this);
    }

    @Override
    public void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {
        keepForSnapshots(flight);
    }

    @Override
    public Figures addInterval(Figures figures) {
        return figures.withSched(interval());
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withSched(totals());
    }

    /** The interval since the previous call, which it closes (call it before {@link #totals} of the tick). */
    public SchedTotals interval() {
        SchedTotals interval = snapshot(false);
        for (ThreadState t : threads) {
            if (t != null) {
                t.counts.sample();
            }
        }
        for (long[] op : opTotals.values()) {
            op[2] = op[0];
            op[3] = op[1];
        }
        for (Culprit c : culprits.values()) {
            c.ns.sample();
        }
        otherCulprits.sample();
        records.sample();
        hitsAtIntervalStart = kernelHits.getAsLong();
        return interval;
    }

    /** The run so far. */
    public SchedTotals totals() {
        return snapshot(true);
    }

    private SchedTotals snapshot(boolean totals) {
        List<SchedThreadTotals> threadList = new ArrayList<>();
        for (ThreadState t : threads) { // slots in order, "other" last
            if (t == null) {
                continue;
            }
            Counts c = t.counts;
            SchedThreadTotals row = new SchedThreadTotals(t.tid, c.of(ThreadState.RUNNING_NS, totals),
                    c.of(ThreadState.RUNNABLE_NS, totals), c.of(ThreadState.SLEEPING_NS, totals),
                    c.of(ThreadState.SWITCHES, totals), c.of(ThreadState.PREEMPTIONS, totals));
            if (row.totalNs() > 0 || row.switches() > 0) {
                threadList.add(row);
            }
        }
        List<SchedOpTotals> ops = new ArrayList<>();
        for (Map.Entry<String, long[]> entry : opTotals.entrySet()) {
            long[] v = entry.getValue();
            long runnable = totals ? v[0] : v[0] - v[2];
            long sleeping = totals ? v[1] : v[1] - v[3];
            if (runnable + sleeping > 0) {
                ops.add(new SchedOpTotals(entry.getKey(), runnable, sleeping));
            }
        }
        ops.sort(Comparator.comparingLong((SchedOpTotals o) -> o.runnableNs() + o.sleepingNs()).reversed());
        List<Interferer> interferers = new ArrayList<>();
        for (Culprit c : culprits.values()) {
            long ns = c.ns.of(0, totals);
            if (ns > 0) {
                interferers.add(new Interferer(c.pid, c.comm, ns, c.pid == targetPid));
            }
        }
        interferers.sort(Comparator.comparingLong(Interferer::ns).reversed().thenComparingInt(Interferer::pid));
        long otherNs = otherCulprits.of(0, totals);
        if (interferers.size() > TOP_INTERFERERS) {
            for (Interferer rest : interferers.subList(TOP_INTERFERERS, interferers.size())) {
                otherNs += rest.ns();
            }
            interferers = interferers.subList(0, TOP_INTERFERERS);
        }
        long hits = kernelHits.getAsLong();
        return new SchedTotals(threadList, ops, interferers, otherNs, records.of(OFF_RECORDS, totals),
                records.of(CULPRIT_RECORDS, totals), totals ? hits : hits - hitsAtIntervalStart);
    }
}
