package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.EventLayout;
import dev.infertop.event.TraceListener;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpSampleTotals;
import dev.infertop.model.ThreadLane;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The operator layer between its exact windows: the clock sampler's records named by code line. A window's graph
 * says, for each thread and each moment, which node group it worked on or waited after ({@link CpuGraph}); a
 * sample that fell in it teaches its code line ({@link OpSampleTotals#LINE_BYTES} bytes of the target's address
 * space) that op. Every sample, in a window or not, is then named by what its line was taught: split between the
 * ops the line was seen in (a kernel shared by MUL_MAT and MUL_MAT_ID counts for both, as the windows saw it),
 * "unknown" where no window has seen the line. The code does not move while the process runs, so what a window
 * taught holds after it; the learning is bounded ({@link #MAX_LINES} lines).
 *
 * <p>Samples wait in a bounded queue until the graph they fell in is assembled (when the next graph starts): one
 * that an attributed graph covers teaches; one that leaves the queue untaught was outside the windows and is
 * counted as such ({@link OpSampleTotals#between()}). Each tick names the tick's samples at once: the live
 * figures lag no window. Collector thread only.
 */
public final class OpSamples implements LayerAggregator, CpuGraphListener {
    /** Code lines learned at most: a large program's hot code is a few thousand. */
    static final int MAX_LINES = 1 << 16;
    /** Samples kept for the windows to teach (at 500 Hz on 16 CPUs, 8 s; the graph that covers one comes in ms). */
    static final int QUEUE = 1 << 16;
    /** How far back from a graph's start a sample that arrived after its graph is still looked for. */
    static final long ORDER_SLACK_NS = 50_000_000L;
    /**
     * A sample this much older than the newest is past teaching: a graph is assembled when the next one starts,
     * and one graph lasting longer (a long prompt) leaves its early samples counted as outside the windows.
     */
    static final long TEACH_WINDOW_NS = 3_000_000_000L;
    /**
     * Two traced graphs in a row closer than this: the compute threads' samples between them were outside graphs.
     * Graph numbers do not advance while the windows are paused, so consecutive numbers can be a pause apart;
     * a pause lasts far longer than this, a token's sampling and bookkeeping less.
     */
    static final long MAX_GAP_BETWEEN_GRAPHS_NS = 20_000_000L;
    static final String WAIT = "barrier wait";
    static final String OUTSIDE = "outside graphs";
    static final String UNKNOWN = "unknown";
    private static final int WAIT_LABEL = 0;
    private static final int OUTSIDE_LABEL = 1;
    private static final int FIRST_OP_LABEL = 2;

    private final java.util.function.LongSupplier periodNs;
    /** Label names by index: barrier wait, outside graphs, then ops as the windows named them. */
    private final List<String> labels = new ArrayList<>(List.of(WAIT, OUTSIDE));
    private final Map<String, Integer> labelOf = new HashMap<>(Map.of(WAIT, WAIT_LABEL, OUTSIDE, OUTSIDE_LABEL));
    private final Map<Long, Line> lines = new HashMap<>();

    // The queue of recent samples (a ring, oldest at head).
    private final int[] queueTid = new int[QUEUE];
    private final long[] queueNs = new long[QUEUE];
    private final long[] queueIp = new long[QUEUE];
    private final boolean[] queueTaught = new boolean[QUEUE];
    private long queueHead;
    private long queueTail;
    /** Queue position of the first sample not yet named for a tick. */
    private long tickFrom;

    // The interval's figures, named at each tick; the run's added up.
    private Tally interval = new Tally();
    private final Tally run = new Tally();
    private final Tally between = new Tally();
    private long learnedSamples;
    private OpSampleTotals intervalFigures = OpSampleTotals.EMPTY;

    /** The previous attributed graph's end, for the samples of its threads between it and the next. */
    private long previousGraphSeq = -1;
    private long previousGraphEndNs;
    private int[] previousTids = new int[0];

    /**
     * Per thread: its sampled activity strip (the exact one is the operator layer's), for the threads sampled in an
     * op in the last {@link ActivityRing#SPAN_NS}, {@link ThreadSlots#MAX_THREADS} at most (~13 KB each): the
     * target chooses how many threads it starts.
     */
    private final Map<Integer, ActivityRing> strips = new HashMap<>();
    /** Threads listed per interval at most (those with most samples): the same bound. */
    static final int MAX_THREADS = ThreadSlots.MAX_THREADS;

    /** {@code periodNs}: the sampler's period while it runs, 0 while it does not (read at each tick). */
    public OpSamples(java.util.function.LongSupplier periodNs) {
        this.periodNs = periodNs;
    }

    /** What a code line was seen running in the windows: samples per label. */
    private static final class Line {
        double[] counts = new double[8];
        double total;
        int best = -1;

        void add(int label) {
            if (label >= counts.length) {
                counts = Arrays.copyOf(counts, Math.max(label + 1, counts.length * 2));
            }
            counts[label] += 1;
            total += 1;
            if (best < 0 || counts[label] > counts[best]) {
                best = label;
            }
        }
    }

    /** Samples named over a span: per label (fractional), and per thread. */
    private static final class Tally {
        long samples;
        double unknown;
        double[] byLabel = new double[8];
        final Map<Integer, double[]> byThread = new HashMap<>();
        final Map<Integer, Long> samplesByThread = new HashMap<>();

        void add(int tid, Line line, boolean perThread) {
            samples++;
            if (perThread) {
                samplesByThread.merge(tid, 1L, Long::sum);
            }
            if (line == null) {
                unknown++;
                return;
            }
            byLabel = grow(byLabel, line.counts.length);
            double[] thread = perThread ? byThread.computeIfAbsent(tid, t -> new double[8]) : null;
            if (thread != null && thread.length < line.counts.length) {
                thread = grow(thread, line.counts.length);
                byThread.put(tid, thread);
            }
            for (int label = 0; label < line.counts.length; label++) {
                double share = line.counts[label] / line.total;
                if (share > 0) {
                    byLabel[label] += share;
                    if (thread != null) {
                        thread[label] += share;
                    }
                }
            }
        }

        private static double[] grow(double[] array, int length) {
            return array.length >= length ? array : Arrays.copyOf(array, length);
        }
    }

    @Override
    public Layer layer() {
        return Layer.OPERATOR;
    }

    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onOpSample(int tid, long timeNs, int cpu, long ip) {
            sample(tid, timeNs, ip);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_OP_SAMPLE ? decoded : null;
    }

    @Override
    public void followGraphs(CpuGraphAssembler graphs) {
        graphs.addListener(this);
    }

    /** One sample (collector thread): queued for the windows to teach, named at the next tick. */
    void sample(int tid, long timeNs, long ip) {
        if (ip == 0) {
            return; // the kernel: the sampler excludes it, a record that says so is not an op
        }
        if (queueTail - queueHead == QUEUE) {
            retire(); // the oldest was never covered by a window
        }
        int at = (int) (queueTail & (QUEUE - 1));
        queueTid[at] = tid;
        queueNs[at] = timeNs;
        queueIp[at] = ip;
        queueTaught[at] = false;
        queueTail++;
    }

    private void retire() {
        if (tickFrom == queueHead) {
            nameForTick(queueHead); // never named: the queue outran the ticks
            tickFrom++;
        }
        int at = (int) (queueHead & (QUEUE - 1));
        if (!queueTaught[at]) {
            between.add(queueTid[at], lines.get(queueIp[at] / OpSampleTotals.LINE_BYTES), false);
        }
        queueHead++;
    }

    @Override
    public void onGraph(CpuGraph graph) {
        if (!graph.attributed() || graph.threadCount() == 0 || graph.groupCount() == 0) {
            previousGraphSeq = -1;
            return;
        }
        int threads = graph.threadCount();
        long startNs = Long.MAX_VALUE;
        for (int t = 0; t < threads; t++) {
            startNs = Math.min(startNs, graph.threadStartNs(t));
        }
        long endNs = graph.releaseNs(graph.groupCount() - 1);
        boolean followsPrevious = previousGraphSeq >= 0 && graph.seq() == previousGraphSeq + 1
                && startNs - previousGraphEndNs <= MAX_GAP_BETWEEN_GRAPHS_NS;
        long fromNs = followsPrevious ? previousGraphEndNs : startNs;
        int[] opLabels = opLabels(graph.groupOpNames(), graph.groupCount());
        for (long i = queueTail - 1; i >= queueHead; i--) {
            int at = (int) (i & (QUEUE - 1));
            long ns = queueNs[at];
            if (ns < fromNs - ORDER_SLACK_NS) {
                break;
            }
            if (queueTaught[at] || ns < fromNs || ns >= endNs) {
                continue;
            }
            int label = labelAt(graph, opLabels, queueTid[at], ns, startNs, followsPrevious);
            if (label >= 0) {
                teach(queueIp[at], label);
                queueTaught[at] = true;
            }
        }
        previousGraphSeq = graph.seq();
        previousGraphEndNs = endNs;
        if (previousTids.length != threads) {
            previousTids = new int[threads];
        }
        for (int t = 0; t < threads; t++) {
            previousTids[t] = graph.tid(t);
        }
    }

    /**
     * What thread {@code tid} did at {@code ns} of the graph: a group's op, its barrier wait, outside graphs (a
     * thread of the target not in the compute, or a compute thread between this graph and the traced one before),
     * or -1 where the graph does not say (before the thread started on it).
     */
    private int labelAt(CpuGraph graph, int[] opLabels, int tid, long ns, long startNs, boolean followsPrevious) {
        int thread = -1;
        for (int t = 0; t < graph.threadCount(); t++) {
            if (graph.tid(t) == tid) {
                thread = t;
                break;
            }
        }
        if (ns < startNs) {
            // Between the traced graph before and this one: outside graphs for a thread of both.
            return followsPrevious && thread >= 0 && contains(previousTids, tid) ? OUTSIDE_LABEL : -1;
        }
        if (thread < 0) {
            return OUTSIDE_LABEL; // a thread of the target that did not run this graph
        }
        if (ns < graph.threadStartNs(thread)) {
            return -1;
        }
        long[] arrivals = graph.arrivals(thread);
        int groups = Math.min(graph.groupCount(), graph.arrivalCount(thread));
        int k = firstAfter(arrivals, groups, ns); // the first group whose arrival is after ns
        if (k < groups) {
            return ns >= graph.workBeginNs(thread, k) ? opLabels[k] : WAIT_LABEL;
        }
        // After its last group's barrier arrival, until the last thread's: waiting.
        return groups > 0 && ns < graph.releaseNs(groups - 1) ? WAIT_LABEL : -1;
    }

    private static int firstAfter(long[] arrivals, int count, long ns) {
        int low = 0;
        int high = count;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (arrivals[mid] <= ns) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    private static boolean contains(int[] tids, int tid) {
        for (int t : tids) {
            if (t == tid) {
                return true;
            }
        }
        return false;
    }

    private String[] lastNames;
    private int[] lastLabels;

    private int[] opLabels(String[] names, int groups) {
        if (names == lastNames && lastLabels != null && lastLabels.length == groups) {
            return lastLabels; // the same grouping as the graph before: the plan's names are reused
        }
        int[] result = new int[groups];
        for (int k = 0; k < groups; k++) {
            result[k] = labelOf.computeIfAbsent(names[k], name -> {
                labels.add(name);
                return labels.size() - 1;
            });
        }
        lastNames = names;
        lastLabels = result;
        return result;
    }

    private void teach(long ip, int label) {
        long key = ip / OpSampleTotals.LINE_BYTES;
        Line line = lines.get(key);
        if (line == null) {
            if (lines.size() >= MAX_LINES) {
                return;
            }
            line = new Line();
            lines.put(key, line);
        }
        line.add(label);
        learnedSamples++;
    }

    /** Names queue entry {@code position} for the interval's figures and its thread's strip. */
    private void nameForTick(long position) {
        int at = (int) (position & (QUEUE - 1));
        int tid = queueTid[at];
        Line line = lines.get(queueIp[at] / OpSampleTotals.LINE_BYTES);
        interval.add(tid, line, true);
        long ns = queueNs[at];
        long period = Math.max(1, periodNs.getAsLong());
        int slot = line == null ? -1 : line.best == WAIT_LABEL ? ActivityRing.WAIT_SLOT
                : line.best == OUTSIDE_LABEL ? -1 : OpClass.of(labels.get(line.best)).ordinal();
        if (slot >= 0) {
            ActivityRing strip = strips.get(tid);
            if (strip == null && strips.size() < MAX_THREADS) {
                strip = new ActivityRing();
                strips.put(tid, strip);
            }
            if (strip != null) {
                strip.add(ns - period, ns, slot);
            }
        }
    }

    @Override
    public void tick() {
        long newestNs = queueTail > 0 ? queueNs[(int) ((queueTail - 1) & (QUEUE - 1))] : 0;
        strips.values().removeIf(strip -> strip.lastNs < newestNs - ActivityRing.SPAN_NS); // threads gone quiet
        for (; tickFrom < queueTail; tickFrom++) {
            nameForTick(tickFrom);
        }
        if (queueTail > queueHead) {
            while (queueHead < queueTail && queueNs[(int) (queueHead & (QUEUE - 1))] < newestNs - TEACH_WINDOW_NS) {
                retire();
            }
        }
        intervalFigures = figures(interval, true);
        fold(interval, run);
        interval = new Tally();
    }

    private static void fold(Tally from, Tally into) {
        into.samples += from.samples;
        into.unknown += from.unknown;
        into.byLabel = Tally.grow(into.byLabel, from.byLabel.length);
        for (int i = 0; i < from.byLabel.length; i++) {
            into.byLabel[i] += from.byLabel[i];
        }
    }

    @Override
    public void finishRun() {
        tick();
        while (queueHead < queueTail) {
            retire();
        }
    }

    /** The period the sampler last ran at: the run's figures keep it after the layer detached (a stop). */
    private long lastPeriodNs;

    private OpSampleTotals figures(Tally tally, boolean perThread) {
        long now = periodNs.getAsLong();
        if (now > 0) {
            lastPeriodNs = now;
        }
        long period = now > 0 ? now : perThread && tally.samples == 0 ? 0 : lastPeriodNs;
        List<OpSampleTotals.Thread> threads = new ArrayList<>();
        if (perThread) {
            for (Map.Entry<Integer, Long> entry : tally.samplesByThread.entrySet()) {
                double[] named = tally.byThread.get(entry.getKey());
                threads.add(new OpSampleTotals.Thread(entry.getKey(), entry.getValue(), mostNamed(named,
                        entry.getValue() - (named == null ? 0 : sum(named)))));
            }
            threads.sort(java.util.Comparator.comparingLong(OpSampleTotals.Thread::samples).reversed()
                    .thenComparingInt(OpSampleTotals.Thread::tid));
            if (threads.size() > MAX_THREADS) {
                threads = new ArrayList<>(threads.subList(0, MAX_THREADS));
            }
            threads.sort(java.util.Comparator.comparingInt(OpSampleTotals.Thread::tid));
        }
        return new OpSampleTotals(period, tally.samples, tally.unknown, at(tally.byLabel, WAIT_LABEL),
                at(tally.byLabel, OUTSIDE_LABEL), ops(tally.byLabel), threads, learnedSamples, lines.size(), null);
    }

    private List<OpSampleTotals.Op> ops(double[] byLabel) {
        double opSamples = 0;
        for (int label = FIRST_OP_LABEL; label < byLabel.length; label++) {
            opSamples += byLabel[label];
        }
        List<OpSampleTotals.Op> ops = new ArrayList<>();
        for (int label = FIRST_OP_LABEL; label < byLabel.length; label++) {
            if (byLabel[label] > 0) {
                ops.add(new OpSampleTotals.Op(labels.get(label), byLabel[label], byLabel[label] / opSamples));
            }
        }
        ops.sort(java.util.Comparator.comparingDouble(OpSampleTotals.Op::samples).reversed()
                .thenComparing(OpSampleTotals.Op::op));
        return ops;
    }

    private String mostNamed(double[] named, double unknown) {
        int best = -1;
        double bestSamples = unknown;
        if (named != null) {
            for (int label = 0; label < named.length; label++) {
                if (named[label] > bestSamples) {
                    best = label;
                    bestSamples = named[label];
                }
            }
        }
        return best < 0 ? UNKNOWN : labels.get(best);
    }

    private static double sum(double[] values) {
        double total = 0;
        for (double v : values) {
            total += v;
        }
        return total;
    }

    private static double at(double[] values, int index) {
        return index < values.length ? values[index] : 0;
    }

    /** The sampled activity strips of the threads sampled in the last {@link ActivityRing#SPAN_NS}. */
    List<ThreadLane> lanes(long nowNs) {
        List<ThreadLane> result = new ArrayList<>();
        for (Map.Entry<Integer, ActivityRing> entry : strips.entrySet()) {
            if (entry.getValue().lastNs >= nowNs - ActivityRing.SPAN_NS) {
                String op = intervalFigures.opOf(entry.getKey());
                result.add(new ThreadLane(entry.getKey(), op == null ? "" : op, ActivityRing.CELL_NS,
                        ActivityRing.cellEnd(nowNs), entry.getValue().freeze(nowNs)));
            }
        }
        return result;
    }

    /** The last tick's figures. */
    OpSampleTotals interval() {
        return intervalFigures;
    }

    /** The run's figures up to the last tick, with the samples outside the windows retired so far. */
    OpSampleTotals total() {
        return figures(run, false).withBetween(new OpSampleTotals.Between(between.samples, between.unknown,
                ops(between.byLabel)));
    }

    @Override
    public Figures addInterval(Figures figures) {
        return figures.withOperators(figures.operators().withSampled(intervalFigures,
                ThreadLane.withSamples(figures.operators().lanes(), lanes(clockNs()))));
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withOperators(figures.operators().withSampled(total(),
                ThreadLane.withSamples(figures.operators().lanes(), lanes(clockNs()))));
    }

    /** The clock the samples are stamped with: CLOCK_MONOTONIC, as bpf_ktime_get_ns (tests call lanes(now)). */
    private static long clockNs() {
        return System.nanoTime();
    }
}
