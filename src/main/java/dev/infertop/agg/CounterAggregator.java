package dev.infertop.agg;

import dev.infertop.history.CounterTimeline;
import dev.infertop.history.FlightRecorder;
import dev.infertop.model.CounterEvent;
import dev.infertop.model.CounterFigures;
import dev.infertop.model.CounterSet;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.OpCounters;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.infertop.event.EventLayout.COUNTERS_DELTA;
import static dev.infertop.event.EventLayout.COUNTERS_ENABLED;
import static dev.infertop.event.EventLayout.COUNTERS_FAILED;
import static dev.infertop.event.EventLayout.COUNTERS_MIGRATED_BITS;
import static dev.infertop.event.EventLayout.COUNTERS_RUNNING;
import static dev.infertop.event.EventLayout.COUNTERS_SWITCHED_BITS;
import static dev.infertop.event.EventLayout.MAX_COUNTER_EVENTS;

/**
 * Attributes counter deltas to ops. Per thread per graph the probes send the deltas of each node group
 * (EVENT_COUNTERS, right after the thread's arrivals); once {@link OperatorAggregator} has attributed that
 * graph it says which op each group was ({@link #onAttributed}), and the deltas, scaled by the record's
 * enabled / running time per event, are added to that op. Groups whose thread changed CPU between its two
 * readings carry no deltas: they are counted as migrated, not guessed.
 * Single writer: the collector thread.
 */
public final class CounterAggregator implements OperatorAggregator.GroupSink {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    static final int HISTORY = 120;

    private volatile CounterSet set;
    private volatile List<CounterEvent> events = List.of();

    /** Records waiting for their graph's attribution, one per thread. */
    private final Pending[] pending = new Pending[256];
    private int pendingCount;

    private final Map<String, OpStats> opStats = new LinkedHashMap<>();
    private String[] cachedNames;
    private OpStats[] cachedStats;

    private final Totals interval = new Totals();
    private final Totals total = new Totals();
    private final double[] bandwidthHistory = new double[HISTORY];
    private int historyCount;

    private static final class Pending {
        int tid;
        long graphSeq = -1;
        int count;
        long[] deltas = new long[1024 * MAX_COUNTER_EVENTS];
        int[] migratedBits = new int[64];
        int[] switchedBits = new int[64];
        final long[] enabledNs = new long[MAX_COUNTER_EVENTS];
        final long[] runningNs = new long[MAX_COUNTER_EVENTS];
    }

    private static final class Totals {
        final long[] values = new long[MAX_COUNTER_EVENTS];
        long countedGroups;
        long migratedGroups;
        long switchedGroups;
        long failedReads;
        long countedNs;

        void reset() {
            Arrays.fill(values, 0);
            countedGroups = migratedGroups = switchedGroups = failedReads = countedNs = 0;
        }
    }

    private static final class OpStats {
        final String name;
        final Totals interval = new Totals();
        final Totals total = new Totals();

        OpStats(String name) {
            this.name = name;
        }
    }

    /** The set being read and the events of it that opened, in `counter_events` order (empty: layer off). */
    public void configure(CounterSet set, List<CounterEvent> opened) {
        this.set = set;
        this.events = List.copyOf(opened);
    }

    /**
     * One EVENT_COUNTERS record at {@code offset} in {@code data} (read during the call only): {@code count}
     * groups of {@link dev.infertop.event.EventLayout#MAX_COUNTER_EVENTS} raw deltas.
     */
    public void onCounters(int tid, long graphSeq, int count, MemorySegment data, long offset) {
        Pending p = pendingOf(tid);
        if (p == null) {
            return;
        }
        p.graphSeq = graphSeq;
        p.count = count;
        if (p.deltas.length < count * MAX_COUNTER_EVENTS) {
            p.deltas = new long[count * MAX_COUNTER_EVENTS];
        }
        MemorySegment.copy(data, LONG, offset + COUNTERS_DELTA, p.deltas, 0, count * MAX_COUNTER_EVENTS);
        MemorySegment.copy(data, INT, offset + COUNTERS_MIGRATED_BITS, p.migratedBits, 0, p.migratedBits.length);
        MemorySegment.copy(data, INT, offset + COUNTERS_SWITCHED_BITS, p.switchedBits, 0, p.switchedBits.length);
        for (int e = 0; e < MAX_COUNTER_EVENTS; e++) {
            p.enabledNs[e] = data.get(LONG, offset + COUNTERS_ENABLED + 8L * e);
            p.runningNs[e] = data.get(LONG, offset + COUNTERS_RUNNING + 8L * e);
        }
        long failed = data.get(INT, offset + COUNTERS_FAILED) & 0xffffffffL;
        interval.failedReads += failed;
        total.failedReads += failed;
    }

    private Pending pendingOf(int tid) {
        for (int i = 0; i < pendingCount; i++) {
            if (pending[i].tid == tid) {
                return pending[i];
            }
        }
        if (pendingCount == pending.length) {
            return null;
        }
        Pending p = new Pending();
        p.tid = tid;
        pending[pendingCount++] = p;
        return p;
    }

    @Override
    public void onAttributed(long graphSeq, int tid, String[] opNames, int groups, long startNs, long[] arrivals) {
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
                op.interval.migratedGroups++;
                op.total.migratedGroups++;
                interval.migratedGroups++;
                total.migratedGroups++;
                continue;
            }
            op.interval.countedGroups++;
            op.total.countedGroups++;
            if ((p.switchedBits[k >>> 5] >>> (k & 31) & 1) != 0) {
                op.interval.switchedGroups++;
                op.total.switchedGroups++;
                interval.switchedGroups++;
                total.switchedGroups++;
            }
            op.interval.countedNs += countedNs;
            op.total.countedNs += countedNs;
            interval.countedGroups++;
            total.countedGroups++;
            interval.countedNs += countedNs;
            total.countedNs += countedNs;
            for (int e = 0; e < MAX_COUNTER_EVENTS; e++) {
                // Scaled by the thread's enabled / running time over the whole graph: per-group times would
                // double the record, and multiplexing rotates events every few ms anyway.
                long value = CounterFigures.scaled(p.deltas[k * MAX_COUNTER_EVENTS + e], p.enabledNs[e],
                        p.runningNs[e]);
                op.interval.values[e] += value;
                op.total.values[e] += value;
                interval.values[e] += value;
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

    private final long[] graphCounts = new long[MAX_COUNTER_EVENTS];
    private CounterTimeline timeline;

    /** Records counter samples into {@code flight} from now on (null: stop). */
    public void keepForSnapshots(FlightRecorder flight) {
        timeline = flight == null ? null : new CounterTimeline(flight);
    }

    private OpStats[] statsFor(String[] opNames) {
        if (opNames != cachedNames) { // the operator layer reuses its per-graph plan while the graph is reused
            OpStats[] stats = new OpStats[opNames.length];
            for (int k = 0; k < opNames.length; k++) {
                stats[k] = opStats.computeIfAbsent(opNames[k], OpStats::new);
            }
            cachedNames = opNames;
            cachedStats = stats;
        }
        return cachedStats;
    }

    /**
     * The interval since the last call ({@code totals} false; call it first) or the run. {@code wallNsByOp}:
     * each op's wall time over the same span, from the operator layer, for per-op bandwidth.
     */
    public CounterTotals snapshot(boolean totals, long intervalNs, Map<String, Long> wallNsByOp) {
        CounterSet current = set;
        List<CounterEvent> opened = events;
        if (current == null || opened.isEmpty()) {
            return CounterTotals.EMPTY;
        }
        int n = opened.size();
        List<OpCounters> ops = new ArrayList<>();
        for (OpStats stats : opStats.values()) {
            Totals t = totals ? stats.total : stats.interval;
            if (t.countedGroups == 0 && t.migratedGroups == 0) {
                continue;
            }
            ops.add(new OpCounters(stats.name, t.countedGroups, t.migratedGroups, t.switchedGroups, values(t, n), t.countedNs,
                    wallNsByOp.getOrDefault(stats.name, 0L)));
        }
        ops.sort((a, b) -> Long.compare(b.countedNs(), a.countedNs()));
        Totals t = totals ? total : interval;
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

    /** Starts a new interval (after both snapshots were taken). */
    public void resetInterval() {
        interval.reset();
        for (OpStats stats : opStats.values()) {
            stats.interval.reset();
        }
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
