package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.CounterDeltas;
import dev.infertop.event.EventLayout;
import dev.infertop.event.TraceListener;
import dev.infertop.history.CounterTimeline;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.CounterEvent;
import dev.infertop.model.CounterFigures;
import dev.infertop.model.CounterSet;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.OpCounters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.infertop.event.CounterDeltas.EVENTS;

/**
 * Attributes counter deltas to ops. Per thread per graph the probes send the deltas of each node group
 * (EVENT_COUNTERS, right after the thread's arrivals); once that CPU graph is attributed ({@link #onGraph})
 * it says which op each group was, and the deltas, scaled by the record's enabled / running time per event,
 * are added to that op. Groups whose thread changed CPU between its two readings carry no deltas: they are
 * counted as migrated, not guessed. Counters are kept once, for the run; an interval is the difference from
 * the previous interval's sample. Single writer: the collector thread.
 */
public final class CounterAggregator implements LayerAggregator, CpuGraphListener {
    static final int HISTORY = 120;

    private volatile CounterSet set;
    private volatile List<CounterEvent> events = List.of();

    /** Records waiting for their graph's attribution, one per thread. */
    private final Pending[] pending = new Pending[256];
    private int pendingCount;

    private final Map<String, OpStats> opStats = new LinkedHashMap<>();
    private String[] cachedNames;
    private OpStats[] cachedStats;

    private final Totals total = new Totals();
    private final Totals totalSample = new Totals();
    private final Totals scratch = new Totals();
    private final double[] bandwidthHistory = new double[HISTORY];
    private int historyCount;

    private static final class Pending {
        int tid;
        long graphSeq = -1;
        int count;
        long[] deltas = new long[1024 * EVENTS];
        int[] migratedBits = new int[CounterDeltas.GROUP_BIT_INTS];
        int[] switchedBits = new int[CounterDeltas.GROUP_BIT_INTS];
        final long[] enabledNs = new long[EVENTS];
        final long[] runningNs = new long[EVENTS];
    }

    private static final class Totals {
        final long[] values = new long[EVENTS];
        long countedGroups;
        long migratedGroups;
        long switchedGroups;
        long failedReads;
        long countedNs;

        /** This minus {@code earlier}, into {@code into}. */
        Totals since(Totals earlier, Totals into) {
            for (int e = 0; e < values.length; e++) {
                into.values[e] = values[e] - earlier.values[e];
            }
            into.countedGroups = countedGroups - earlier.countedGroups;
            into.migratedGroups = migratedGroups - earlier.migratedGroups;
            into.switchedGroups = switchedGroups - earlier.switchedGroups;
            into.failedReads = failedReads - earlier.failedReads;
            into.countedNs = countedNs - earlier.countedNs;
            return into;
        }

        void copyFrom(Totals from) {
            from.since(ZERO, this);
        }

        private static final Totals ZERO = new Totals();
    }

    private static final class OpStats {
        final String name;
        final Totals total = new Totals();
        final Totals sample = new Totals();

        OpStats(String name) {
            this.name = name;
        }
    }

    /** The set being read and the events of it that opened, in `counter_events` order (empty: layer off). */
    public void configure(CounterSet set, List<CounterEvent> opened) {
        this.set = set;
        this.events = List.copyOf(opened);
    }

    /** One thread's counter readings over graph {@code graphSeq} (the decoder's view: read during the call only). */
    public void onCounters(int tid, long graphSeq, CounterDeltas record) {
        Pending p = pendingOf(tid);
        if (p == null) {
            return;
        }
        int count = record.groups();
        p.graphSeq = graphSeq;
        p.count = count;
        if (p.deltas.length < count * EVENTS) {
            p.deltas = new long[count * EVENTS];
        }
        record.copyDeltasTo(p.deltas);
        record.copyMigratedBitsTo(p.migratedBits);
        record.copySwitchedBitsTo(p.switchedBits);
        for (int e = 0; e < EVENTS; e++) {
            p.enabledNs[e] = record.enabledNs(e);
            p.runningNs[e] = record.runningNs(e);
        }
        total.failedReads += record.failedReads();
    }

    private Pending pendingOf(int tid) {
        for (int i = 0; i < pendingCount; i++) {
            if (pending[i].tid == tid) {
                return pending[i];
            }
        }
        if (pendingCount == pending.length) {
            // A thread per request: the entry whose record is oldest (none waiting, or one of a graph long
            // gone) is given to the new thread.
            Pending oldest = pending[0];
            for (int i = 1; i < pendingCount; i++) {
                if (pending[i].graphSeq < oldest.graphSeq) {
                    oldest = pending[i];
                }
            }
            oldest.tid = tid;
            oldest.graphSeq = -1;
            return oldest;
        }
        Pending p = new Pending();
        p.tid = tid;
        pending[pendingCount++] = p;
        return p;
    }

    @Override
    public void onGraph(CpuGraph graph) {
        if (!graph.attributed()) {
            return;
        }
        for (int t = 0; t < graph.threadCount(); t++) {
            onAttributed(graph.seq(), graph.tid(t), graph.groupOpNames(), graph.groupCount(), graph.threadStartNs(t),
                    graph.arrivals(t));
        }
    }

    /**
     * Thread {@code tid} ran graph {@code graphSeq}'s {@code groups} node groups, group k as op
     * {@code opNames[k]}, starting at {@code startNs} and reaching the barrier after group k at {@code arrivals[k]}.
     */
    private void onAttributed(long graphSeq, int tid, String[] opNames, int groups, long startNs, long[] arrivals) {
        Pending p = null;
        for (int i = 0; i < pendingCount; i++) {
            if (pending[i].tid == tid) {
                p = pending[i];
                break;
            }
        }
        if (p == null || p.graphSeq != graphSeq) {
            return; // no counters for this thread and graph (layer off, or the record was lost)
        }
        p.graphSeq = -1;
        OpStats[] stats = statsFor(opNames);
        int n = Math.min(groups, p.count);
        long previous = startNs;
        java.util.Arrays.fill(graphCounts, 0);
        long counted = 0;
        for (int k = 0; k < n; k++) {
            long countedNs = Math.max(0, arrivals[k] - previous);
            previous = arrivals[k];
            OpStats op = stats[k];
            if ((p.migratedBits[k >>> 5] >>> (k & 31) & 1) != 0) {
                op.total.migratedGroups++;
                total.migratedGroups++;
                continue;
            }
            op.total.countedGroups++;
            if ((p.switchedBits[k >>> 5] >>> (k & 31) & 1) != 0) {
                op.total.switchedGroups++;
                total.switchedGroups++;
            }
            op.total.countedNs += countedNs;
            total.countedGroups++;
            total.countedNs += countedNs;
            for (int e = 0; e < EVENTS; e++) {
                // Scaled by the thread's enabled / running time over the whole graph: per-group times would
                // double the record, and multiplexing rotates events every few ms anyway.
                long value = CounterFigures.scaled(p.deltas[k * EVENTS + e], p.enabledNs[e],
                        p.runningNs[e]);
                op.total.values[e] += value;
                total.values[e] += value;
                graphCounts[e] += value;
            }
            counted++;
        }
        CounterSet current = set;
        if (timeline != null && counted > 0 && current != null && n > 0) {
            timeline.onGraph(events, current.lineBytes(), startNs, arrivals[n - 1], graphCounts);
        }
    }

    private final long[] graphCounts = new long[EVENTS];
    private CounterTimeline timeline;

    /** Records counter samples into {@code flight} from now on (null: stop). */
    public void keepForSnapshots(FlightRecorder flight) {
        timeline = flight == null ? null : new CounterTimeline(flight);
    }

    private OpStats[] statsFor(String[] opNames) {
        if (opNames != cachedNames) { // the same array while the CPU graph's grouping is the same
            OpStats[] stats = new OpStats[opNames.length];
            for (int k = 0; k < opNames.length; k++) {
                stats[k] = opStats.computeIfAbsent(opNames[k], OpStats::new);
            }
            cachedNames = opNames;
            cachedStats = stats;
        }
        return cachedStats;
    }

    @Override
    public Layer layer() {
        return Layer.COUNTERS;
    }

    /** The counters layer's record, as the decoder reads it. */
    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onCounters(int tid, long graphSeq, CounterDeltas record) {
            CounterAggregator.this.onCounters(tid, graphSeq, record);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_COUNTERS ? decoded : null;
    }

    /** Told each attributed CPU graph's groups and ops. */
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
        return figures.withCounters(interval(figures.spanNs(), wallNsByOp(figures)));
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withCounters(totals(figures.spanNs(), wallNsByOp(figures)));
    }

    /** Each op's wall time in the operator layer's figures: the span its bandwidths are over. */
    private static Map<String, Long> wallNsByOp(Figures figures) {
        Map<String, Long> wall = new java.util.HashMap<>();
        for (var op : figures.operators().ops()) {
            wall.put(op.op(), op.wallNs());
        }
        return wall;
    }

    /**
     * The interval since the previous call, which it closes (call it before {@link #totals} of the same tick).
     * {@code wallNsByOp}: each op's wall time over the same span, from the operator layer, for per-op bandwidth.
     */
    public CounterTotals interval(long intervalNs, Map<String, Long> wallNsByOp) {
        CounterTotals result = snapshot(false, intervalNs, wallNsByOp);
        totalSample.copyFrom(total);
        for (OpStats stats : opStats.values()) {
            stats.sample.copyFrom(stats.total);
        }
        return result;
    }

    /** The run so far ({@code runNs} long); see {@link #interval}. */
    public CounterTotals totals(long runNs, Map<String, Long> wallNsByOp) {
        return snapshot(true, runNs, wallNsByOp);
    }

    private CounterTotals snapshot(boolean totals, long intervalNs, Map<String, Long> wallNsByOp) {
        CounterSet current = set;
        List<CounterEvent> opened = events;
        if (current == null || opened.isEmpty()) {
            return CounterTotals.EMPTY;
        }
        int n = opened.size();
        List<OpCounters> ops = new ArrayList<>();
        for (OpStats stats : opStats.values()) {
            Totals t = totals ? stats.total : stats.total.since(stats.sample, scratch);
            if (t.countedGroups == 0 && t.migratedGroups == 0) {
                continue;
            }
            ops.add(new OpCounters(stats.name, t.countedGroups, t.migratedGroups, t.switchedGroups, values(t, n), t.countedNs,
                    wallNsByOp.getOrDefault(stats.name, 0L)));
        }
        ops.sort((a, b) -> Long.compare(b.countedNs(), a.countedNs()));
        Totals t = totals ? total : total.since(totalSample, scratch);
        CounterTotals result = new CounterTotals(current.name(), opened.stream().map(CounterEvent::name).toList(),
                current.lineBytes(), indexOf(opened, CounterEvent.Role.REFILLS),
                indexOf(opened, CounterEvent.Role.INSTRUCTIONS), indexOf(opened, CounterEvent.Role.CYCLES), ops,
                values(t, n), t.countedGroups, t.migratedGroups, t.switchedGroups, t.failedReads, t.countedNs, List.of());
        if (!totals) {
            bandwidthHistory[historyCount % HISTORY] = result.refillBytesPerSecond(intervalNs);
            historyCount++;
        }
        List<Double> history = new ArrayList<>();
        for (int i = Math.max(0, historyCount - HISTORY); i < historyCount; i++) {
            history.add(bandwidthHistory[i % HISTORY]);
        }
        return new CounterTotals(result.setName(), result.events(), result.lineBytes(), result.refillsIndex(),
                result.instructionsIndex(), result.cyclesIndex(), ops, result.values(), result.countedGroups(),
                result.migratedGroups(), result.switchedGroups(), result.failedReads(), result.countedNs(), history);
    }

    private static List<Long> values(Totals t, int n) {
        List<Long> values = new ArrayList<>(n);
        for (int e = 0; e < n; e++) {
            values.add(t.values[e]);
        }
        return values;
    }

    private static int indexOf(List<CounterEvent> events, CounterEvent.Role role) {
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).role() == role) {
                return i;
            }
        }
        return -1;
    }
}
