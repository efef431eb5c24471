package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.Percentiles;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpTotals;
import dev.infertop.model.TensorGroup;
import dev.infertop.model.ThreadLane;
import dev.infertop.model.ThreadTotals;
import org.HdrHistogram.Histogram;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Rebuilds, for each traced CPU graph, which node each worker thread was running and for how long.
 *
 * <p>Inputs per graph: its nodes (read once when the compute started), each thread's start, and each thread's
 * arrival at the barrier after its k-th node group. The CPU node loop runs the non-empty, to-be-computed nodes
 * in order (a fused op covers several nodes) and calls the barrier after each, so arrival k ends group k.
 * The barrier releases when the last thread arrives, so for group k:
 * <pre>
 *   release(k)     = max over threads of arrival_t(k)
 *   work_t(k)      = arrival_t(k) - release(k-1)      (release(0) = the thread's start)
 *   wait_t(k)      = release(k) - arrival_t(k)        (barrier wait, reported apart from work)
 *   wall(k)        = release(k) - release(k-1)
 * </pre>
 * A thread whose arrival count does not match the groups makes the graph "unattributed" (counted, not
 * guessed).
 *
 * <p>Older node loops (llama.cpp b4234 and its time) skip nothing: they run every node, empty ones (VIEW,
 * RESHAPE, …) included, and call the barrier after each, so each thread arrives exactly n_nodes times. When
 * the arrivals do not fit the skipping loop but every thread arrived once per node, each node is its own
 * group. Both readings fit the same arrivals only when at most one node is empty (with none they are the
 * same); the skipping loop is then assumed.
 * Single writer: the collector thread.
 */
public final class OperatorAggregator {
    /** 2 digits (1 %): each snapshot reads every op's histograms, and a 1 % percentile is all views show. */
    private static final int SIGNIFICANT_DIGITS = 2;
    /**
     * Tensor groups are two per layer (160 for an 80-layer model): 2 digits (1 %) keeps their four histograms
     * each at ~20 KB instead of ~160 KB, and a percentile to 1 % is all the table shows.
     */
    private static final int TENSOR_GROUP_SIGNIFICANT_DIGITS = 2;

    private final OpNaming naming;
    private final NameTable names;

    // The graph being assembled.
    private long graphSeq = -1;
    /** graph_seq of the node list held in the arrays below (a reused graph points back at it). */
    private long nodesReadSeq = -1;
    private long graphStartNs;
    private int nodeCount;
    private long[] tensors = new long[2048];
    private int[] ops = new int[2048];
    private int[] opParams = new int[2048];
    private int[] flags = new int[2048];
    private int[] types = new int[2048];
    private int[] nameIds = new int[2048];
    private long[] src1s = new long[2048];
    private long[] shapes = new long[2048 * 4];
    private final ThreadTrack[] threads = new ThreadTrack[256];
    private int threadCount;
    private final List<long[]> fusedGroups = new ArrayList<>(); // {seq, tensor, nextTensor}
    private int fusedFromTid = -1;
    /**
     * The fused groups of the graph whose nodes were read last. A reused graph runs the same fusion, so the
     * probes stop reporting fused calls for it (a ring-buffer record per fused call per thread saved, ~66 per
     * token on the bench model) and it inherits these; a different fusion would not match its barrier count.
     */
    private final List<long[]> readGraphFusedGroups = new ArrayList<>();
    private static final int FUSION_INHERITED = -2;
    /**
     * Fused groups worked out from the graph ({@link FusionPatterns}) instead of reported by probes on the
     * fused calls, which are then not attached. Null, or fused calls probed: every fused group is reported.
     */
    private FusionPatterns fusion;
    private volatile boolean fusedCallsProbed = true;
    /** The fused groups of the graph being assembled (and of the graph read last) were inferred, not reported. */
    private boolean fusionInferred;
    private boolean readGraphFusionInferred;
    /** An inferred fusion did not match a thread's barrier count: the fused calls must be probed. */
    private volatile boolean fusedCallsNeeded;
    private int fusionMismatchesInARow;
    private static final int FUSION_MISMATCHES_BEFORE_PROBING = 3;

    // Results.
    private final Map<String, OpStats> opStats = new LinkedHashMap<>();
    private final Map<String, OpStats> tensorGroupStats = new LinkedHashMap<>();
    /**
     * Tensor groups kept, each with its histograms (~80 KB): two per layer, so 159 layers and "in/out", more
     * than any model has; the target names its tensors, and "blk.N" for a new N per node would otherwise add
     * a group per node. Past it a name's nodes go to "other", counted in {@link #tensorNamesFolded()}.
     */
    public static final int MAX_TENSOR_GROUPS = 320;
    private long tensorNamesFolded;
    /** Tensor group per interned tensor name id, so a group is named once per name, not once per node. */
    private String[] tensorGroupOfName = new String[1024];
    private final Map<Integer, ThreadStats> threadStats = new LinkedHashMap<>();
    private long graphsAttributed;
    private long graphsUnattributed;
    private long intervalGraphsAttributed;
    private long intervalGraphsUnattributed;

    private static final class ThreadTrack {
        int tid;
        int cpu;
        long startNs;
        long[] arrivals = new long[2048];
        int arrivalCount;
        int lastCpu;
        boolean migrated;
    }

    private static final class OpStats {
        final String name;
        long groups;
        long nodes;
        long workNs;
        long waitNs;
        long wallNs;
        long totalGroups;
        long totalNodes;
        long totalWorkNs;
        long totalWaitNs;
        long totalWallNs;
        String lastShape = "";
        final IntervalRecorder recorder;
        final Histogram total;
        Histogram interval;

        OpStats(String name) {
            this(name, SIGNIFICANT_DIGITS);
        }

        OpStats(String name, int significantDigits) {
            this.name = name;
            this.recorder = new IntervalRecorder(significantDigits);
            this.total = new Histogram(significantDigits);
        }
    }

    private static final class ThreadStats {
        final int tid;
        final ActivityRing activity = new ActivityRing();
        String currentOp = "";
        long workNs;
        long waitNs;
        long groups;
        long totalWorkNs;
        long totalWaitNs;
        long totalGroups;
        int lastCpu;
        long migrations;

        ThreadStats(int tid) {
            this.tid = tid;
        }
    }

    public OperatorAggregator(OpNaming naming, NameTable names) {
        this.naming = naming;
        this.names = names;
    }

    /** Told each attributed node group of each thread, e.g. to join other per-thread timelines with ops. */
    public interface GroupListener {
        /** Thread {@code tid} spent [beginNs, endNs] in a group of {@code op} (its work, then barrier wait). */
        void onGroup(int tid, String op, long beginNs, long endNs);
    }

    private GroupListener groupListener;

    public void setGroupListener(GroupListener listener) {
        this.groupListener = listener;
    }

    // Snapshots: op slices per thread for the timeline, op interval histograms for the log (null when not kept).
    private FlightRecorder flight;
    private IntervalHistograms histograms;

    void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {
        this.flight = flight;
        this.histograms = histograms;
        cachedPlan = null; // the next plan names its groups in the recorder
    }

    /** Told each attributed group's wall time, then that the graph is done (the operator DAG's times). */
    public interface NodeTimeSink {
        /** Group of nodes {@code firstNode..lastNode} (indexes in the graph) of graph {@code graphSeq} took {@code wallNs}. */
        void onGroup(long graphSeq, int firstNode, int lastNode, long wallNs);

        /** Graph {@code graphSeq}, whose nodes were read as graph {@code nodesReadSeq}, is attributed. */
        void onGraphAttributed(long graphSeq, long nodesReadSeq);
    }

    private NodeTimeSink nodeTimeSink;

    /** Where attributed group times go besides the op statistics (one sink; null for none). */
    public void setNodeTimeSink(NodeTimeSink sink) {
        this.nodeTimeSink = sink;
    }

    public void onNode(long seq, long startNs, int index, int nNodes, long tensor, int op, int type, int flag,
                       int opParam0, long ne0, long ne1, long ne2, long ne3, int nameId) {
        onNode(seq, startNs, index, nNodes, tensor, op, type, flag, opParam0, ne0, ne1, ne2, ne3, 0, nameId);
    }

    /** A node with its second source's address ({@code src1}: a MUL_MAT's FLOPs need that source's shape). */
    public void onNode(long seq, long startNs, int index, int nNodes, long tensor, int op, int type, int flag,
                       int opParam0, long ne0, long ne1, long ne2, long ne3, long src1, int nameId) {
        if (seq != graphSeq) {
            finishGraph();
            beginGraph(seq, startNs);
            nodesReadSeq = seq;
        }
        if (index < 0 || index >= 1 << 16) {
            return;
        }
        ensureNodeCapacity(index + 1);
        tensors[index] = tensor;
        ops[index] = op;
        opParams[index] = opParam0;
        flags[index] = flag;
        types[index] = type;
        nameIds[index] = nameId;
        src1s[index] = src1;
        shapes[index * 4] = ne0;
        shapes[index * 4 + 1] = ne1;
        shapes[index * 4 + 2] = ne2;
        shapes[index * 4 + 3] = ne3;
        nodeCount = Math.max(nodeCount, index + 1);
    }

    /** A graph identical to the one whose nodes were read last: keep those nodes, start a new graph. */
    public void onGraphSame(long seq, long sameAsSeq, long timeNs) {
        finishGraph();
        if (sameAsSeq != nodesReadSeq || nodeCount == 0) {
            // The nodes it refers to never arrived (ring full, layer switched on since): cannot attribute.
            graphSeq = -1;
            graphsUnattributed++;
            intervalGraphsUnattributed++;
            return;
        }
        int nodes = nodeCount;
        beginGraph(seq, timeNs);
        nodeCount = nodes;
        fusedGroups.addAll(readGraphFusedGroups);
        fusedFromTid = FUSION_INHERITED;
        fusionInferred = readGraphFusionInferred;
    }

    /**
     * Fused groups come from the graph and these patterns while {@code probed} is false (the fused calls are
     * not probed); from the probes' reports while it is true.
     */
    public void fusion(FusionPatterns patterns, boolean probed) {
        this.fusion = patterns;
        this.fusedCallsProbed = probed;
    }

    /** Whether the fused calls are probed now (they are again after {@link #fusedCallsNeeded}, or for MoE). */
    public void fusedCallsProbed(boolean probed) {
        this.fusedCallsProbed = probed;
    }

    /** Whether a graph's inferred fusion failed its barrier counts: the session then probes the fused calls. */
    public boolean fusedCallsNeeded() {
        return fusedCallsNeeded && !fusedCallsProbed;
    }

    /**
     * The fused groups of the graph read (no fused call is reported: they are not probed): each run of
     * consecutive nodes matching a pattern, starting at an executed node. Right when the target fused every
     * such run, which the barrier counts then confirm exactly ({@link #arrivalsExact}).
     */
    private void inferFusion() {
        for (int i = 0; i < nodeCount; i++) {
            if (!NodeGroups.executes(naming, ops[i], flags[i])) {
                continue;
            }
            for (int[] pattern : fusion.patterns()) {
                if (i + pattern.length <= nodeCount && runMatches(i, pattern)) {
                    int last = i + pattern.length - 1;
                    fusedGroups.add(new long[] {i, tensors[i], tensors[last]});
                    i = last;
                    break;
                }
            }
        }
    }

    private boolean runMatches(int first, int[] pattern) {
        for (int k = 0; k < pattern.length; k++) {
            if (ops[first + k] != pattern[k]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether every thread reached the barrier exactly as often as the loop does with these groups: once after
     * each group, except after a group ending at the graph's last node (the loop skips that one), plus once
     * after the loop. No slack: an inferred fusion one group off must not pass.
     */
    private boolean arrivalsExact(List<int[]> groups) {
        return !groups.isEmpty()
                && arrivalsFit(groups.size() + (groups.get(groups.size() - 1)[1] == nodeCount - 1 ? 0 : 1), 0);
    }

    /** One thread's start and barrier arrivals over graph {@code seq} ({@code count} longs at {@code tsOffset}). */
    public void onArrivals(int tid, long seq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                           MemorySegment data, long tsOffset, int count) {
        if (seq != graphSeq) {
            return; // its nodes were not read (ring full, or the layer was switched on mid-graph)
        }
        ThreadTrack track = track(tid);
        if (track == null) {
            return;
        }
        track.startNs = startNs;
        track.cpu = cpuFirst;
        track.lastCpu = cpuLast;
        track.migrated = migrated;
        if (count > track.arrivals.length) {
            track.arrivals = new long[Math.max(count, track.arrivals.length * 2)];
        }
        MemorySegment.copy(data, ValueLayout.JAVA_LONG_UNALIGNED, tsOffset, track.arrivals, 0, count);
        track.arrivalCount = count;
    }

    public void onFused(int tid, long seq, int group, long tensor, long nextTensor) {
        if (seq != graphSeq) {
            return;
        }
        if (fusedFromTid == -1) {
            fusedFromTid = tid;
        }
        if (tid == fusedFromTid) {
            fusedGroups.add(new long[] {group, tensor, nextTensor});
        }
    }

    private ThreadTrack track(int tid) {
        for (int i = 0; i < threadCount; i++) {
            if (threads[i].tid == tid) {
                return threads[i];
            }
        }
        if (threadCount == threads.length) {
            return null;
        }
        ThreadTrack track = threads[threadCount];
        if (track == null) {
            track = new ThreadTrack();
            threads[threadCount] = track;
        }
        track.tid = tid;
        track.startNs = 0;
        track.arrivalCount = 0;
        track.migrated = false;
        threadCount++;
        return track;
    }

    private void beginGraph(long seq, long startNs) {
        graphSeq = seq;
        graphStartNs = startNs;
        nodeCount = 0;
        threadCount = 0;
        fusedGroups.clear();
        fusedFromTid = -1;
        fusionInferred = false;
    }

    private void ensureNodeCapacity(int count) {
        if (count <= tensors.length) {
            return;
        }
        int capacity = Math.max(count, tensors.length * 2);
        tensors = Arrays.copyOf(tensors, capacity);
        ops = Arrays.copyOf(ops, capacity);
        opParams = Arrays.copyOf(opParams, capacity);
        flags = Arrays.copyOf(flags, capacity);
        types = Arrays.copyOf(types, capacity);
        nameIds = Arrays.copyOf(nameIds, capacity);
        src1s = Arrays.copyOf(src1s, capacity);
        shapes = Arrays.copyOf(shapes, capacity * 4);
    }

    private boolean inFlightAtEnd;

    /** At the end of tracing: attributes the last graph if its threads reported, else drops it as in flight. */
    public void finishLastGraph() {
        inFlightAtEnd = true;
        finishGraph();
        inFlightAtEnd = false;
    }

    /** Attributes the graph being assembled, if complete. Called when the next graph starts, or at the end. */
    public void finishGraph() {
        if (graphSeq < 0 || nodeCount == 0) {
            return;
        }
        if (graphSeq == nodesReadSeq) {
            if (!fusedCallsProbed && fusion != null && fusedGroups.isEmpty()) {
                inferFusion();
                fusionInferred = !fusedGroups.isEmpty();
            }
            readGraphFusedGroups.clear();
            readGraphFusedGroups.addAll(fusedGroups);
            readGraphFusionInferred = fusionInferred;
        }
        if (threadCount == 0 && inFlightAtEnd) {
            graphSeq = -1; // still running when tracing stopped: neither attributed nor a failure
            return;
        }
        GraphPlan plan = plan(false);
        if (fusionInferred) {
            if (!arrivalsExact(plan.groups)) {
                // Not the groups the loop ran: a graph the layer was switched on in the middle of, or the target
                // did not fuse every run the patterns match (e.g. a type it cannot fuse). Do not guess; after a
                // few such graphs in a row (a reused graph repeats its fusion, a switch does not), probe.
                if (++fusionMismatchesInARow >= FUSION_MISMATCHES_BEFORE_PROBING) {
                    fusedCallsNeeded = true;
                }
                graphsUnattributed++;
                intervalGraphsUnattributed++;
                graphSeq = -1;
                return;
            }
            fusionMismatchesInARow = 0;
        }
        // Older releases (before GGML_TENSOR_FLAG_COMPUTE) run every node, empty ones included, with a
        // barrier after each: when the arrivals fit that and not the current loop, each node is a group.
        if (!arrivalsFit(plan.size(), 1) && arrivalsFit(nodeCount, 0)) {
            plan = plan(true);
        }
        List<int[]> groups = plan.groups;
        if (!arrivalsFit(groups.size(), 1) || groups.isEmpty()) {
            graphsUnattributed++;
            intervalGraphsUnattributed++;
            graphSeq = -1;
            return;
        }
        long previousRelease = Long.MAX_VALUE;
        for (int t = 0; t < threadCount; t++) {
            previousRelease = Math.min(previousRelease, threads[t].startNs);
            threadStatsOf[t] = threadStats.computeIfAbsent(threads[t].tid, ThreadStats::new);
        }
        for (int k = 0; k < groups.size(); k++) {
            long release = 0;
            for (int t = 0; t < threadCount; t++) {
                release = Math.max(release, threads[t].arrivals[k]);
            }
            int[] group = groups.get(k);
            String opName = plan.opNames[k];
            OpStats stats = plan.opStats[k];
            OpStats tensorGroup = plan.tensorGroups[k];
            OpClass opClass = plan.opClasses[k];
            long wallNs = Math.max(0, release - previousRelease);
            int nodes = group[1] - group[0] + 1;
            String shape = plan.shapes[k];
            recordGroup(stats, nodes, wallNs, shape);
            recordGroup(tensorGroup, nodes, wallNs, shape);
            if (nodeTimeSink != null) nodeTimeSink.onGroup(graphSeq, group[0], group[1], wallNs);
            for (int t = 0; t < threadCount; t++) {
                ThreadTrack track = threads[t];
                long begin = k == 0 ? track.startNs : Math.max(previousRelease, track.startNs);
                long workNs = Math.max(0, track.arrivals[k] - begin);
                long waitNs = Math.max(0, release - track.arrivals[k]);
                stats.workNs += workNs;
                stats.totalWorkNs += workNs;
                stats.waitNs += waitNs;
                stats.totalWaitNs += waitNs;
                tensorGroup.workNs += workNs;
                tensorGroup.totalWorkNs += workNs;
                tensorGroup.waitNs += waitNs;
                tensorGroup.totalWaitNs += waitNs;
                ThreadStats thread = threadStatsOf[t];
                if (flight != null) {
                    flight.record(FlightRecorder.Kind.OP, track.tid, begin, track.arrivals[k], plan.flightLabels[k],
                            nameIds[group[1]], plan.flops[k]);
                    if (release > track.arrivals[k]) {
                        flight.record(FlightRecorder.Kind.WAIT, track.tid, track.arrivals[k], release,
                                plan.flightLabels[k], nameIds[group[1]], k);
                    }
                }
                thread.activity.add(begin, track.arrivals[k], opClass.ordinal());
                thread.activity.add(track.arrivals[k], release, ActivityRing.WAIT_SLOT);
                thread.currentOp = opName;
                thread.workNs += workNs;
                thread.totalWorkNs += workNs;
                thread.waitNs += waitNs;
                thread.totalWaitNs += waitNs;
                thread.groups++;
                thread.totalGroups++;
                if (groupListener != null) {
                    groupListener.onGroup(track.tid, opName, begin, Math.max(begin, release));
                }
            }
            previousRelease = release;
        }
        for (int t = 0; t < threadCount; t++) {
            ThreadStats thread = threadStats.computeIfAbsent(threads[t].tid, ThreadStats::new);
            thread.lastCpu = threads[t].lastCpu;
            if (threads[t].migrated) {
                thread.migrations++;
            }
        }
        if (groupSink != null) {
            for (int t = 0; t < threadCount; t++) {
                groupSink.onAttributed(graphSeq, threads[t].tid, plan.opNames, groups.size(), threads[t].startNs,
                        threads[t].arrivals);
            }
        }
        graphsAttributed++;
        intervalGraphsAttributed++;
        if (nodeTimeSink != null) nodeTimeSink.onGraphAttributed(graphSeq, nodesReadSeq);
        graphSeq = -1;
    }

    /** Told which op each node group of an attributed graph was, per thread (the counters layer listens). */
    public interface GroupSink {
        /**
         * Thread {@code tid} ran graph {@code graphSeq}'s {@code groups} node groups, group k as op
         * {@code opNames[k]}, starting at {@code startNs} and reaching the barrier after group k at
         * {@code arrivals[k]} (arrays valid during the call only; the same opNames array while the plan is reused).
         */
        void onAttributed(long graphSeq, int tid, String[] opNames, int groups, long startNs, long[] arrivals);
    }

    private GroupSink groupSink;

    public void groupSink(GroupSink sink) {
        this.groupSink = sink;
    }

    /**
     * Whether every thread started and arrived at the barrier once after each of {@code groupCount} groups, plus
     * up to {@code extra} more times (a loop that also calls the barrier once after its last node).
     */
    /**
     * Whether every thread's arrival count fits {@code groupCount} groups: the loop's barrier follows every
     * group but the last when it ends the graph, and the barrier after the loop follows it, so G arrivals,
     * or G + {@code extra} when trailing nodes were skipped.
     */
    private boolean arrivalsFit(int groupCount, int extra) {
        if (threadCount == 0) {
            return false;
        }
        for (int t = 0; t < threadCount; t++) {
            int arrivals = threads[t].arrivalCount;
            if (arrivals < groupCount || arrivals > groupCount + extra) {
                return false;
            }
        }
        return true;
    }

    /** The groups of a node loop that runs every node, empty or not, with a barrier after each. */
    private final ThreadStats[] threadStatsOf = new ThreadStats[256];

    /**
     * What each node group of a graph is: its op name, stats, tensor group, class and shape. Worked out once
     * per node list read (and fusion pattern), then reused for every graph that reuses it: llama.cpp runs the
     * same graph token after token, and names, lookups and formatting per group would cost more than the
     * attribution itself.
     */
    private static final class GraphPlan {
        /** The node list it was worked out from; a re-read identical list takes it over ({@link #sameNodes}). */
        long nodesReadSeq;
        final long fusedSignature;
        final boolean everyNode;
        final List<int[]> groups;
        final String[] opNames;
        final OpStats[] opStats;
        final OpStats[] tensorGroups;
        final OpClass[] opClasses;
        final String[] shapes;
        final int[] flightLabels;
        /** Estimated FLOPs of each group ({@link #flopsOf}), -1 where unknown. */
        final long[] flops;
        // Copies of the node fields the plan was worked out from.
        private long[] nodeTensors;
        private long[] nodeSrc1s;
        private long[] nodeShapes;
        private int[] nodeOps;
        private int[] nodeOpParams;
        private int[] nodeFlags;
        private int[] nodeTypes;
        private int[] nodeNameIds;

        GraphPlan(long nodesReadSeq, long fusedSignature, boolean everyNode, List<int[]> groups) {
            this.nodesReadSeq = nodesReadSeq;
            this.fusedSignature = fusedSignature;
            this.everyNode = everyNode;
            this.groups = groups;
            this.opNames = new String[groups.size()];
            this.opStats = new OpStats[groups.size()];
            this.tensorGroups = new OpStats[groups.size()];
            this.opClasses = new OpClass[groups.size()];
            this.shapes = new String[groups.size()];
            this.flightLabels = new int[groups.size()];
            this.flops = new long[groups.size()];
        }

        int size() {
            return groups.size();
        }

        void keepNodes(int count, long[] tensors, long[] src1s, long[] shapes, int[] ops, int[] opParams,
                       int[] flags, int[] types, int[] nameIds) {
            this.nodeTensors = Arrays.copyOf(tensors, count);
            this.nodeSrc1s = Arrays.copyOf(src1s, count);
            this.nodeShapes = Arrays.copyOf(shapes, count * 4);
            this.nodeOps = Arrays.copyOf(ops, count);
            this.nodeOpParams = Arrays.copyOf(opParams, count);
            this.nodeFlags = Arrays.copyOf(flags, count);
            this.nodeTypes = Arrays.copyOf(types, count);
            this.nodeNameIds = Arrays.copyOf(nameIds, count);
        }

        /** Whether {@code count} nodes read later are the ones this plan was worked out from, field for field. */
        boolean sameNodes(int count, long[] tensors, long[] src1s, long[] shapes, int[] ops, int[] opParams,
                          int[] flags, int[] types, int[] nameIds) {
            return count == nodeTensors.length
                    && Arrays.equals(nodeTensors, 0, count, tensors, 0, count)
                    && Arrays.equals(nodeOps, 0, count, ops, 0, count)
                    && Arrays.equals(nodeFlags, 0, count, flags, 0, count)
                    && Arrays.equals(nodeNameIds, 0, count, nameIds, 0, count)
                    && Arrays.equals(nodeShapes, 0, count * 4, shapes, 0, count * 4)
                    && Arrays.equals(nodeOpParams, 0, count, opParams, 0, count)
                    && Arrays.equals(nodeTypes, 0, count, types, 0, count)
                    && Arrays.equals(nodeSrc1s, 0, count, src1s, 0, count);
        }
    }

    private GraphPlan cachedPlan;

    private GraphPlan plan(boolean everyNode) {
        long fusedSignature = 0x9e3779b97f4a7c15L;
        for (long[] fused : fusedGroups) {
            fusedSignature = (fusedSignature ^ fused[0]) * 0x100000001b3L;
            fusedSignature = (fusedSignature ^ fused[1]) * 0x100000001b3L;
            fusedSignature = (fusedSignature ^ fused[2]) * 0x100000001b3L;
        }
        GraphPlan plan = cachedPlan;
        if (plan != null && plan.fusedSignature == fusedSignature && plan.everyNode == everyNode) {
            if (plan.nodesReadSeq == nodesReadSeq) {
                return plan;
            }
            // The probes re-read a reused graph every few dozen tokens: when nothing in it changed, naming and
            // formatting its ~300 groups again (most of a re-read's cost) would give the same plan.
            if (plan.sameNodes(nodeCount, tensors, src1s, shapes, ops, opParams, flags, types, nameIds)) {
                plan.nodesReadSeq = nodesReadSeq;
                return plan;
            }
        }
        plan = new GraphPlan(nodesReadSeq, fusedSignature, everyNode, everyNode ? NodeGroups.everyNode(nodeCount)
                : NodeGroups.groups(nodeCount, tensors, ops, flags, naming, fusedGroups));
        for (int k = 0; k < plan.size(); k++) {
            int[] group = plan.groups.get(k);
            String opName = groupName(group);
            plan.opNames[k] = opName;
            plan.opStats[k] = opStats.computeIfAbsent(opName, OpStats::new);
            // A fused group by its last node: RMS_NORM+MUL's norm is "norm-N" in both halves of a layer, its
            // MUL "attn_norm-N" or "ffn_norm-N".
            plan.tensorGroups[k] = tensorGroupStats.computeIfAbsent(tensorGroup(nameIds[group[1]]),
                    name -> new OpStats(name, TENSOR_GROUP_SIGNIFICANT_DIGITS));
            plan.opClasses[k] = OpClass.of(opName);
            plan.shapes[k] = shape(group[0]);
            plan.flightLabels[k] = flight == null ? -1 : flight.label(opName);
            plan.flops[k] = flight == null ? -1 : groupFlops(group);
        }
        plan.keepNodes(nodeCount, tensors, src1s, shapes, ops, opParams, flags, types, nameIds);
        cachedPlan = plan;
        return plan;
    }

    private Map<Long, Integer> nodeIndexByTensor;
    private long nodeIndexReadSeq = -1;

    /** The FLOPs of a group's non-empty nodes, summed; -1 when one of them is unknown. */
    private long groupFlops(int[] group) {
        if (nodeIndexReadSeq != nodesReadSeq) {
            nodeIndexByTensor = new HashMap<>();
            for (int i = 0; i < nodeCount; i++) {
                nodeIndexByTensor.put(tensors[i], i);
            }
            nodeIndexReadSeq = nodesReadSeq;
        }
        long sum = 0;
        for (int i = group[0]; i <= group[1]; i++) {
            if (naming.isEmpty(ops[i])) {
                continue;
            }
            Integer src1 = nodeIndexByTensor.get(src1s[i]);
            long flops = flopsOf(naming.opName(ops[i], opParams[i]), shapes[i * 4], shapes[i * 4 + 1],
                    shapes[i * 4 + 2], shapes[i * 4 + 3], src1 == null || src1s[i] == 0 ? -1 : shapes[src1 * 4]);
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

    private String groupName(int[] group) {
        if (group[0] == group[1]) {
            return naming.opName(ops[group[0]], opParams[group[0]]);
        }
        StringBuilder name = new StringBuilder();
        for (int i = group[0]; i <= group[1]; i++) {
            if (naming.isEmpty(ops[i])) {
                continue;
            }
            if (!name.isEmpty()) {
                name.append('+');
            }
            name.append(naming.opName(ops[i], opParams[i]));
        }
        return name.toString();
    }

    private static void recordGroup(OpStats stats, int nodes, long wallNs, String shape) {
        stats.groups++;
        stats.totalGroups++;
        stats.nodes += nodes;
        stats.totalNodes += nodes;
        stats.wallNs += wallNs;
        stats.totalWallNs += wallNs;
        stats.recorder.recordValue(wallNs);
        stats.lastShape = shape;
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

    private String shape(int index) {
        return String.format(Locale.ROOT, "%s [%d,%d,%d,%d]", names.name(nameIds[index]), shapes[index * 4],
                shapes[index * 4 + 1], shapes[index * 4 + 2], shapes[index * 4 + 3]);
    }

    /** Per-op figures for the interval since the last call (and the run), sorted by total wall time. */
    public List<OpTotals> snapshotOps(boolean totals) {
        if (!totals && histograms != null) {
            List<OpTotals> result = snapshot(opStats, false);
            for (OpStats stats : opStats.values()) {
                histograms.add("op:" + stats.name, stats.interval);
            }
            return result;
        }
        return snapshot(opStats, totals);
    }

    /** Each op's run histogram of wall time per node group (ns), tagged {@code op:NAME}; see TraceAggregator. */
    void forEachRunHistogram(java.util.function.BiConsumer<String, Histogram> reader) {
        for (OpStats stats : opStats.values()) {
            if (stats.totalGroups > 0) {
                reader.accept("op:" + stats.name, stats.total);
            }
        }
    }

    /** The same per tensor group ("blk.3 attention"); call after {@link #snapshotOps} for the same span. */
    public List<OpTotals> snapshotTensorGroups(boolean totals) {
        return snapshot(tensorGroupStats, totals);
    }

    private static dev.infertop.model.LatencySummary summary(Histogram histogram, long[] plotValues, double meanNs) {
        if (histogram.getTotalCount() == 0) {
            return dev.infertop.model.LatencySummary.EMPTY;
        }
        return new dev.infertop.model.LatencySummary(histogram.getTotalCount(), plotValues[P50] / 1e6,
                plotValues[P90] / 1e6, plotValues[P99] / 1e6, histogram.getMaxValue() / 1e6, meanNs / 1e6);
    }

    private static LatencyDistribution distribution(Histogram histogram, long[] plotValues) {
        if (histogram.getTotalCount() == 0) {
            return LatencyDistribution.EMPTY;
        }
        double[] ms = new double[plotValues.length];
        for (int i = 0; i < ms.length; i++) {
            double p = LatencyDistribution.PLOT_PERCENTILES[i];
            ms[i] = (p == 0 ? histogram.getMinValue() : p == 100 ? histogram.getMaxValue() : plotValues[i]) / 1e6;
        }
        return new LatencyDistribution(LatencyDistribution.PLOT_PERCENTILES, ms);
    }

    // Indexes of p50, p90, p99 in LatencyDistribution.PLOT_PERCENTILES.
    private static final int P50 = 2;
    private static final int P90 = 4;
    private static final int P99 = 6;

    private static List<OpTotals> snapshot(Map<String, OpStats> statsByName, boolean totals) {
        List<OpTotals> result = new ArrayList<>();
        for (OpStats stats : statsByName.values()) {
            if (!totals) {
                stats.interval = stats.recorder.getIntervalHistogram(stats.interval);
                stats.recorder.addInterval(stats.interval, stats.total);
            }
            if (stats.totalGroups == 0) {
                continue; // named by a graph that could not be attributed: nothing ran under it
            }
            Histogram histogram = totals ? stats.total : stats.interval;
            if (histogram == null) {
                histogram = new Histogram(1);
            }
            // One pass over the histogram for the summary, its mean and the plot (p50, p90, p99 are plot points).
            Percentiles.Pass pass = totals
                    ? stats.recorder.totalPercentiles(histogram, LatencyDistribution.PLOT_PERCENTILES)
                    : stats.recorder.intervalPercentiles(histogram, LatencyDistribution.PLOT_PERCENTILES);
            long[] plotValues = pass.values();
            result.add(new OpTotals(stats.name,
                    totals ? stats.totalGroups : stats.groups, totals ? stats.totalNodes : stats.nodes,
                    totals ? stats.totalWallNs : stats.wallNs, totals ? stats.totalWorkNs : stats.workNs,
                    totals ? stats.totalWaitNs : stats.waitNs,
                    summary(histogram, plotValues, pass.mean()), stats.lastShape, distribution(histogram, plotValues)));
        }
        result.sort((a, b) -> Long.compare(b.wallNs(), a.wallNs()));
        return result;
    }

    /** Each thread's recent activity up to {@code nowNs}, in {@code cells} cells of {@code cellNs}. */
    public List<ThreadLane> snapshotLanes(long nowNs) {
        List<ThreadLane> result = new ArrayList<>();
        for (ThreadStats stats : threadStats.values()) {
            if (stats.activity.lastNs < nowNs - ActivityRing.SPAN_NS) {
                continue; // a thread that ran no graph for the whole strip is gone (pool resized, target restarted)
            }
            result.add(new ThreadLane(stats.tid, stats.currentOp, ActivityRing.CELL_NS,
                    ActivityRing.cellEnd(nowNs), stats.activity.freeze(nowNs)));
        }
        return result;
    }

    public List<ThreadTotals> snapshotThreads(boolean totals) {
        List<ThreadTotals> result = new ArrayList<>();
        for (ThreadStats stats : threadStats.values()) {
            result.add(new ThreadTotals(stats.tid, totals ? stats.totalGroups : stats.groups,
                    totals ? stats.totalWorkNs : stats.workNs, totals ? stats.totalWaitNs : stats.waitNs,
                    stats.lastCpu, stats.migrations));
        }
        return result;
    }

    public long graphsAttributed(boolean totals) {
        return totals ? graphsAttributed : intervalGraphsAttributed;
    }

    public long graphsUnattributed(boolean totals) {
        return totals ? graphsUnattributed : intervalGraphsUnattributed;
    }

    /** Distinct tensor names whose group was not kept ({@link #MAX_TENSOR_GROUPS} reached): shown as "other". */
    public long tensorNamesFolded() {
        return tensorNamesFolded;
    }

    /** Tensor groups kept now. */
    public int tensorGroups() {
        return tensorGroupStats.size();
    }

    /** Starts a new interval (after both interval and total views were taken). */
    public void resetInterval() {
        for (OpStats stats : opStats.values()) {
            stats.groups = stats.nodes = stats.workNs = stats.waitNs = stats.wallNs = 0;
        }
        for (OpStats stats : tensorGroupStats.values()) {
            stats.groups = stats.nodes = stats.workNs = stats.waitNs = stats.wallNs = 0;
        }
        for (ThreadStats stats : threadStats.values()) {
            stats.groups = stats.workNs = stats.waitNs = 0;
        }
        intervalGraphsAttributed = intervalGraphsUnattributed = 0;
    }

    /**
     * A thread's time per op class (and barrier wait) in fixed cells over the last {@link #SPAN_NS}: bounded
     * and allocation-free however many groups run (a 245 M model runs ~85 k groups/s on 2 threads).
     */
    static final class ActivityRing {
        static final long CELL_NS = 50_000_000L;
        static final int CELLS = 200;
        static final long SPAN_NS = CELL_NS * CELLS;
        static final int WAIT_SLOT = OpClass.values().length;
        private static final int SLOTS = WAIT_SLOT + 1;

        private final long[] nsBySlot = new long[CELLS * SLOTS];
        private final long[] cellIndex = new long[CELLS]; // absolute cell number held in each ring position
        long lastNs;

        static long cellEnd(long nowNs) {
            return (Math.floorDiv(nowNs, CELL_NS) + 1) * CELL_NS;
        }

        void add(long fromNs, long toNs, int slot) {
            if (toNs <= fromNs) {
                return;
            }
            lastNs = Math.max(lastNs, toNs);
            long from = Math.max(fromNs, toNs - SPAN_NS);
            while (from < toNs) {
                long cell = Math.floorDiv(from, CELL_NS);
                long cellEndNs = (cell + 1) * CELL_NS;
                long until = Math.min(toNs, cellEndNs);
                int position = (int) Math.floorMod(cell, (long) CELLS);
                if (cellIndex[position] != cell) {
                    cellIndex[position] = cell;
                    java.util.Arrays.fill(nsBySlot, position * SLOTS, (position + 1) * SLOTS, 0L);
                }
                nsBySlot[position * SLOTS + slot] += until - from;
                from = until;
            }
        }

        /** One byte per cell, oldest first, the last cell the one holding {@code nowNs}. */
        byte[] freeze(long nowNs) {
            byte[] cells = new byte[CELLS];
            long last = Math.floorDiv(nowNs, CELL_NS);
            for (int i = 0; i < CELLS; i++) {
                long cell = last - (CELLS - 1 - i);
                int position = (int) Math.floorMod(cell, (long) CELLS);
                byte value = ThreadLane.IDLE;
                if (cellIndex[position] == cell) {
                    long best = 0;
                    for (int slot = 0; slot < SLOTS; slot++) {
                        long ns = nsBySlot[position * SLOTS + slot];
                        if (ns > best) {
                            best = ns;
                            value = slot == WAIT_SLOT ? ThreadLane.WAIT : (byte) slot;
                        }
                    }
                }
                cells[i] = value;
            }
            return cells;
        }
    }
}
