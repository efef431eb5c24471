package dev.infertop.agg;

import dev.infertop.event.ArrivalTimes;
import dev.infertop.model.Limits;
import dev.infertop.model.HistogramTag;
import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.Other;
import dev.infertop.model.TensorGroup;
import dev.infertop.model.ThreadLane;
import dev.infertop.model.ThreadTotals;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The operator layer: which op each worker thread ran and for how long, per op, per tensor group and per
 * thread. It owns the CPU graph walk ({@link #graphs()}: the assembler the layers that need the graph listen
 * to, MoE among them) and is that walk's first listener: each attributed graph's groups (work, barrier wait
 * and wall time by {@link CpuGraph}'s rule) go to their op's and tensor group's counters and histograms, each
 * thread's activity strip, and the flight recorder when one is kept. Unattributed graphs are counted.
 * Single writer: the collector thread.
 */
public final class OperatorAggregator implements LayerAggregator, CpuGraphListener, ThreadSlots.Listener {
    /** 2 digits (1 %): each snapshot reads every op's histograms, and a 1 % percentile is all views show. */
    private static final int SIGNIFICANT_DIGITS = 2;
    /**
     * Tensor groups are two per layer (160 for an 80-layer model): 2 digits (1 %) keeps their four histograms
     * each at ~20 KB instead of ~160 KB, and a percentile to 1 % is all the table shows.
     */
    private static final int TENSOR_GROUP_SIGNIFICANT_DIGITS = 2;
    /**
     * Tensor groups kept, each with its histograms (~80 KB): two per layer, so 159 layers and "in/out", more
     * than any model has; the target names its tensors, and "blk.N" for a new N per node would otherwise add
     * a group per node. Past it a name's nodes go to "other", counted in {@link #tensorNamesFolded()}.
     */
    public static final int MAX_TENSOR_GROUPS = 320;

    // Graph counters (kept once; intervals from the previous sample).
    private static final int ATTRIBUTED = 0;
    private static final int UNATTRIBUTED = 1;

    private final OpNaming naming;
    private final NameTable names;
    private final CpuGraphAssembler graphs;

    private final Map<String, OpStats> opStats = new LinkedHashMap<>();
    private final Map<String, OpStats> tensorGroupStats = new LinkedHashMap<>();
    private long tensorNamesFolded;
    /** Tensor group per interned tensor name id, so a group is named once per name, not once per node. */
    private String[] tensorGroupOfName = new String[1024];
    /** Per thread slot ({@link ThreadSlots}: the target chooses how many threads it starts); the last is "other". */
    private final ThreadSlots threadSlots;
    private final ThreadStats[] threadStats = new ThreadStats[ThreadSlots.MAX_THREADS + 1];
    private final ThreadStats[] threadStatsOf = new ThreadStats[CpuGraph.MAX_THREADS];
    private final Counts graphCounts = new Counts(2);
    private OpPlan cachedPlan;

    // Snapshots: op slices per thread for the timeline, op interval histograms for the log (null when not kept).
    private FlightRecorder flight;
    private IntervalHistograms histograms;

    private static final class ThreadStats {
        static final int GROUPS = 0;
        static final int WORK_NS = 1;
        static final int WAIT_NS = 2;

        final int tid;
        /** Null for the "other" row: a strip of many threads would show none of them. */
        final ActivityRing activity;
        final Counts counts = new Counts(3);
        String currentOp = "";
        int lastCpu;
        long migrations;

        ThreadStats(int tid) {
            this.tid = tid;
            this.activity = tid == Other.TID ? null : new ActivityRing();
        }
    }

    public OperatorAggregator(OpNaming naming, NameTable names) {
        this(naming, names, new ThreadSlots());
    }

    /** @param threadSlots the target's threads, shared with the other layers that keep figures per thread */
    public OperatorAggregator(OpNaming naming, NameTable names, ThreadSlots threadSlots) {
        this.naming = naming;
        this.names = names;
        this.threadSlots = threadSlots;
        this.graphs = new CpuGraphAssembler(naming);
        graphs.addListener(this);
        threadSlots.addListener(this);
    }

    /** The thread slots this layer keys its per-thread figures by. */
    @Override
    public ThreadSlots threadSlots() {
        return threadSlots;
    }

    private ThreadStats threadStats(int tid) {
        int slot = threadSlots.slotOf(tid);
        ThreadStats stats = threadStats[slot];
        if (stats == null) {
            stats = threadStats[slot] = new ThreadStats(threadSlots.tid(slot));
        }
        return stats;
    }

    /** A thread exited: its counts go to the "other" row (the run's totals stay whole), its slot is freed. */
    @Override
    public void foldIntoOther(int slot) {
        ThreadStats gone = threadStats[slot];
        if (gone == null) {
            return;
        }
        ThreadStats other = threadStats[ThreadSlots.OTHER];
        if (other == null) {
            other = threadStats[ThreadSlots.OTHER] = new ThreadStats(Other.TID);
        }
        other.counts.addAll(gone.counts);
        other.migrations += gone.migrations;
        threadStats[slot] = null;
    }

    /** The CPU graph walk: feed it the operator layer's records; other layers listen to it. */
    @Override
    public CpuGraphAssembler graphWalk() {
        return graphs;
    }

    public CpuGraphAssembler graphs() {
        return graphs;
    }

    /** See {@link CpuGraphAssembler#fusion}: the session's switch of the fused-call probes. */
    public void fusion(FusionPatterns patterns, boolean probed) {
        graphs.fusion(patterns, probed);
    }

    /** See {@link CpuGraphAssembler#fusedCallsProbed}. */
    public void fusedCallsProbed(boolean probed) {
        graphs.fusedCallsProbed(probed);
    }

    /** See {@link CpuGraphAssembler#fusedCallsNeeded}. */
    public boolean fusedCallsNeeded() {
        return graphs.fusedCallsNeeded();
    }

    /** At the end of tracing: attributes the last graph if its threads reported, else drops it as in flight. */
    public void finishLastGraph() {
        graphs.finishLastGraph();
    }

    @Override
    public Layer layer() {
        return Layer.OPERATOR;
    }

    /** The operator layer's records (nodes, repeats, each thread's arrivals, fused calls): its graph walk's. */
    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onNode(long graphSeq, long graphStartNs, int index, int nNodes, long tensor, int op, int type,
                           int flags, int opParam0, long ne0, long ne1, long ne2, long ne3, long src0, long src1,
                           long src2, int nameId) {
            graphs.onNode(graphSeq, graphStartNs, index, nNodes, tensor, op, type, flags, opParam0, ne0, ne1, ne2,
                    ne3, src0, src1, src2, nameId);
        }

        @Override
        public void onGraphSame(long graphSeq, long sameAsSeq, long timeNs) {
            graphs.onGraphSame(graphSeq, sameAsSeq, timeNs);
        }

        @Override
        public void onArrivals(int tid, long graphSeq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                               ArrivalTimes arrivals) {
            graphs.onArrivals(tid, graphSeq, startNs, cpuFirst, cpuLast, migrated, arrivals);
        }

        @Override
        public void onFused(int tid, long graphSeq, int seq, long tensor, long nextTensor, long timeNs) {
            graphs.onFused(tid, graphSeq, seq, tensor, nextTensor);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return switch (kind) {
            case EventLayout.EVENT_NODE, EventLayout.EVENT_GRAPH_SAME, EventLayout.EVENT_ARRIVALS,
                 EventLayout.EVENT_FUSED -> decoded;
            default -> null;
        };
    }

    /** The graph it owns is finished: attributed if its threads reported, else dropped as in flight. */
    @Override
    public void finishRun() {
        finishLastGraph();
    }

    @Override
    public void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {
        this.flight = flight;
        this.histograms = histograms;
        cachedPlan = null; // the next plan names its groups in the recorder
    }

    @Override
    public void onGraph(CpuGraph graph) {
        switch (graph.status()) {
            case ATTRIBUTED -> record(graph);
            case UNATTRIBUTED -> graphCounts.add(UNATTRIBUTED, 1);
            case NOT_READ, IN_FLIGHT -> { } // nothing was known to attribute, nothing failed
        }
    }

    /** One attributed graph into the op, tensor-group and thread figures, the activity strips and the timeline. */
    private void record(CpuGraph graph) {
        OpPlan plan = plan(graph);
        String[] opNames = graph.groupOpNames();
        int threads = graph.threadCount();
        for (int t = 0; t < threads; t++) {
            threadStatsOf[t] = threadStats(graph.tid(t));
        }
        for (int k = 0; k < graph.groupCount(); k++) {
            long release = graph.releaseNs(k);
            long wallNs = graph.groupWallNs(k);
            int nodes = graph.lastNode(k) - graph.firstNode(k) + 1;
            OpStats stats = plan.opStats[k];
            OpStats tensorGroup = plan.tensorGroups[k];
            stats.recordGroup(nodes, wallNs, plan.shapes[k]);
            tensorGroup.recordGroup(nodes, wallNs, plan.shapes[k]);
            for (int t = 0; t < threads; t++) {
                long begin = graph.workBeginNs(t, k);
                long arrival = graph.arrivals(t)[k];
                long workNs = Math.max(0, arrival - begin);
                long waitNs = Math.max(0, release - arrival);
                stats.recordThread(workNs, waitNs);
                tensorGroup.recordThread(workNs, waitNs);
                if (flight != null) {
                    int nameId = graph.nameId(graph.lastNode(k));
                    flight.record(FlightRecorder.Kind.OP, graph.tid(t), begin, arrival, plan.flightLabels[k], nameId,
                            plan.flops[k]);
                    if (release > arrival) {
                        flight.record(FlightRecorder.Kind.WAIT, graph.tid(t), arrival, release, plan.flightLabels[k],
                                nameId, k);
                    }
                }
                ThreadStats thread = threadStatsOf[t];
                if (thread.activity != null) {
                    thread.activity.add(begin, arrival, plan.opClasses[k].ordinal());
                    thread.activity.add(arrival, release, ActivityRing.WAIT_SLOT);
                }
                thread.currentOp = opNames[k];
                thread.counts.add(ThreadStats.GROUPS, 1);
                thread.counts.add(ThreadStats.WORK_NS, workNs);
                thread.counts.add(ThreadStats.WAIT_NS, waitNs);
            }
        }
        for (int t = 0; t < threads; t++) {
            threadStatsOf[t].lastCpu = graph.lastCpu(t);
            if (graph.migrated(t)) {
                threadStatsOf[t].migrations++;
            }
        }
        graphCounts.add(ATTRIBUTED, 1);
    }

    /** What to record for each group of the graph's grouping: the last plan while the grouping is the same. */
    private OpPlan plan(CpuGraph graph) {
        if (cachedPlan != null && cachedPlan.layoutKey == graph.layoutKey()) {
            return cachedPlan;
        }
        OpPlan plan = new OpPlan(graph.layoutKey(), graph.groupCount());
        Map<Long, Integer> nodeOfTensor = flight == null ? null : nodeIndexByTensor(graph);
        String[] opNames = graph.groupOpNames();
        for (int k = 0; k < graph.groupCount(); k++) {
            String opName = opNames[k];
            plan.opStats[k] = opStats.computeIfAbsent(opName, name -> new OpStats(name, SIGNIFICANT_DIGITS));
            // A fused group by its last node: RMS_NORM+MUL's norm is "norm-N" in both halves of a layer, its
            // MUL "attn_norm-N" or "ffn_norm-N".
            plan.tensorGroups[k] = tensorGroupStats.computeIfAbsent(tensorGroup(graph.nameId(graph.lastNode(k))),
                    name -> new OpStats(name, TENSOR_GROUP_SIGNIFICANT_DIGITS));
            plan.opClasses[k] = OpClass.of(opName);
            plan.shapes[k] = shape(graph, graph.firstNode(k));
            plan.flightLabels[k] = flight == null ? -1 : flight.label(opName);
            plan.flops[k] = flight == null ? -1 : groupFlops(graph, k, nodeOfTensor);
        }
        cachedPlan = plan;
        return plan;
    }

    private static Map<Long, Integer> nodeIndexByTensor(CpuGraph graph) {
        Map<Long, Integer> index = new HashMap<>();
        for (int i = 0; i < graph.nodeCount(); i++) {
            index.put(graph.tensor(i), i);
        }
        return index;
    }

    /** The FLOPs of a group's non-empty nodes, summed; -1 when one of them is unknown. */
    private long groupFlops(CpuGraph graph, int group, Map<Long, Integer> nodeOfTensor) {
        long sum = 0;
        for (int i = graph.firstNode(group); i <= graph.lastNode(group); i++) {
            if (naming.isEmpty(graph.op(i))) {
                continue;
            }
            long src1Address = graph.src(i, 1);
            Integer src1 = nodeOfTensor.get(src1Address);
            long flops = flopsOf(naming.opName(graph.op(i), graph.opParam0(i)), graph.ne(i, 0), graph.ne(i, 1),
                    graph.ne(i, 2), graph.ne(i, 3), src1 == null || src1Address == 0 ? -1 : graph.ne(src1, 0));
            if (flops < 0) {
                return -1;
            }
            sum += flops;
        }
        return sum;
    }

    /**
     * Estimated FLOPs of one node from its op and shapes. MUL_MAT: 2·K·ne0·ne1·ne2·ne3 of its output, K being
     * the shared dimension, read as ne0 of its second source (src1: the activations, a node of the same
     * graph); unknown (-1) when src1 is not a node. MUL_MAT_ID (MoE: which experts ran is not known here):
     * unknown. Every other op counts its output's elements, one operation each: an estimate (an attention
     * kernel does far more per element).
     */
    static long flopsOf(String op, long ne0, long ne1, long ne2, long ne3, long src1Ne0) {
        long elements = Math.max(1, ne0) * Math.max(1, ne1) * Math.max(1, ne2) * Math.max(1, ne3);
        if (op.equals("MUL_MAT")) {
            return src1Ne0 <= 0 ? -1 : 2 * src1Ne0 * elements;
        }
        return op.startsWith("MUL_MAT_ID") ? -1 : elements;
    }

    private String tensorGroup(int nameId) {
        if (nameId < 0) {
            return TensorGroup.OTHER;
        }
        if (nameId >= tensorGroupOfName.length) {
            tensorGroupOfName = Arrays.copyOf(tensorGroupOfName, Math.max(nameId + 1, tensorGroupOfName.length * 2));
        }
        String group = tensorGroupOfName[nameId];
        if (group == null) {
            group = TensorGroup.of(names.name(nameId));
            if (tensorGroupStats.size() >= MAX_TENSOR_GROUPS && !tensorGroupStats.containsKey(group)) {
                group = TensorGroup.OTHER;
                tensorNamesFolded++;
            }
            tensorGroupOfName[nameId] = group;
        }
        return group;
    }

    private String shape(CpuGraph graph, int node) {
        return String.format(Locale.ROOT, "%s [%d,%d,%d,%d]", names.name(graph.nameId(node)), graph.ne(node, 0),
                graph.ne(node, 1), graph.ne(node, 2), graph.ne(node, 3));
    }

    // --- Snapshots ---

    /**
     * The interval since the previous call, which it closes: op and tensor-group histograms swapped (and
     * logged when kept), every counter's sample taken. Call before {@link #totals} of the same tick.
     */
    public OperatorTotals interval(List<ThreadLane> lanes) {
        List<OpTotals> ops = OpFigures.of(opStats.values(), false);
        if (histograms != null) {
            for (OpStats stats : opStats.values()) {
                stats.recorder.logInterval(histograms, HistogramTag.op(stats.name));
            }
        }
        OperatorTotals interval = new OperatorTotals(ops, threads(false), graphCounts.interval(ATTRIBUTED),
                graphCounts.interval(UNATTRIBUTED), OpFigures.of(tensorGroupStats.values(), false), lanes);
        opStats.values().forEach(stats -> stats.counts.sample());
        tensorGroupStats.values().forEach(stats -> stats.counts.sample());
        for (ThreadStats stats : threadStats) {
            if (stats != null) {
                stats.counts.sample();
            }
        }
        graphCounts.sample();
        return interval;
    }

    /** The run so far, up to the last {@link #interval} (its histograms). */
    public OperatorTotals totals(List<ThreadLane> lanes) {
        return new OperatorTotals(OpFigures.of(opStats.values(), true), threads(true), graphCounts.total(ATTRIBUTED),
                graphCounts.total(UNATTRIBUTED), OpFigures.of(tensorGroupStats.values(), true), lanes);
    }

    /** Each op's run histogram of wall time per node group (ns), tagged {@code op:NAME}; see TraceAggregator. */
    @Override
    public void forEachRunHistogram(BiConsumer<String, Histogram> reader) {
        for (OpStats stats : opStats.values()) {
            if (stats.counts.total(OpStats.GROUPS) > 0) {
                reader.accept(HistogramTag.op(stats.name), stats.recorder.totalHistogram());
            }
        }
    }

    /** Each thread's recent activity up to {@code nowNs}, in cells of {@link ActivityRing#CELL_NS}. */
    public List<ThreadLane> lanes(long nowNs) {
        List<ThreadLane> result = new ArrayList<>();
        for (ThreadStats stats : threadStats) {
            if (stats == null || stats.activity == null || stats.activity.lastNs < nowNs - ActivityRing.SPAN_NS) {
                continue; // a thread that ran no graph for the whole strip is gone (pool resized, target restarted)
            }
            result.add(new ThreadLane(stats.tid, stats.currentOp, ActivityRing.CELL_NS,
                    ActivityRing.cellEnd(nowNs), stats.activity.freeze(nowNs)));
        }
        return result;
    }

    private List<ThreadTotals> threads(boolean totals) {
        List<ThreadTotals> result = new ArrayList<>();
        for (ThreadStats stats : threadStats) { // slots in order, "other" last
            if (stats == null) {
                continue;
            }
            Counts c = stats.counts;
            result.add(new ThreadTotals(stats.tid, c.of(ThreadStats.GROUPS, totals), c.of(ThreadStats.WORK_NS, totals),
                    c.of(ThreadStats.WAIT_NS, totals), stats.tid == Other.TID ? -1 : stats.lastCpu, stats.migrations));
        }
        return result;
    }

    /** Distinct tensor names whose group was not kept ({@link #MAX_TENSOR_GROUPS} reached): shown as "other". */
    public long tensorNamesFolded() {
        return tensorNamesFolded;
    }

    /** Tensor groups kept now. */
    public int tensorGroups() {
        return tensorGroupStats.size();
    }

    /** Per op, the figures over every CPU graph where the budget's windows traced some (the graph layer's counts). */
    private final OpEstimator estimator = new OpEstimator();
    private long tickNs;
    /** The tick's traced figures (taken at {@link #tick}), then the run's with their estimates (addInterval). */
    private OperatorTotals tickInterval = OperatorTotals.EMPTY;
    private OperatorTotals tickTotal = OperatorTotals.EMPTY;

    @Override
    public void closeInterval(long nowNs) {
        tickNs = nowNs;
    }

    /** The lanes up to the tick, the interval's and the run's traced figures: before any other layer's figures. */
    @Override
    public void tick() {
        List<ThreadLane> lanes = lanes(tickNs);
        tickInterval = interval(lanes);
        tickTotal = totals(lanes);
    }

    /** The interval's figures, each op's estimated over the interval's CPU graphs ({@code figures.cpuGraphs()}). */
    @Override
    public Figures addInterval(Figures figures) {
        OperatorTotals[] estimated = estimator.estimate(tickInterval, tickTotal, figures.cpuGraphs());
        tickTotal = estimated[1];
        return figures.withOperators(estimated[0]);
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withOperators(tickTotal);
    }

    /** Its tensor groups (by name) and the graph walk's op names, both keyed by what the target chooses. */
    @Override
    public java.util.List<Limits.Bound> bounds() {
        return java.util.List.of(
                Limits.Bound.of("tensor_groups", tensorGroups(), "tensor_groups_cap",
                        MAX_TENSOR_GROUPS, Limits.Past.capped("tensor_names_folded",
                                tensorNamesFolded())),
                Limits.Bound.of("op_names", graphs.opNames(), "op_names_cap",
                        CpuGraphAssembler.MAX_OP_NAMES, Limits.Past.capped("op_groups_folded",
                                graphs.opGroupsFolded())));
    }
}
