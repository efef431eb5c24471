package dev.infertop.agg.graph;

import dev.infertop.event.ArrivalTimes;
import java.util.ArrayList;
import java.util.List;

/**
 * Assembles each traced CPU graph once, from the operator layer's records, and hands it to every
 * {@link CpuGraphListener} when the next graph starts (or tracing ends).
 *
 * <p>Inputs per graph, in ring order: its nodes (read when the compute started) or a note that it reuses the
 * nodes read for an earlier graph, the fused calls one thread reported, then each thread's start and
 * arrivals at the barrier after its k-th node group. The CPU node loop runs the non-empty, to-be-computed
 * nodes in order (a fused op covers several) and calls the barrier after each group, so arrival k ends
 * group k ({@link CpuGraph} has the timing rule). A thread whose arrival count does not match the groups
 * makes the graph unattributed (counted, not guessed).
 *
 * <p>Older node loops (llama.cpp b4234 and its time) skip nothing: they run every node, empty ones (VIEW,
 * RESHAPE, …) included, and call the barrier after each, so each thread arrives exactly n_nodes times. When
 * the arrivals do not fit the skipping loop but every thread arrived once per node, each node is its own
 * group. Both readings fit the same arrivals only when at most one node is empty (with none they are the
 * same); the skipping loop is then assumed.
 *
 * <p>Fused groups: reported by probes on the fused calls, or, while those are not probed, worked out from the
 * nodes and the target's fusion patterns, and then checked against the barrier counts exactly.
 * Single writer: the collector thread; no allocation per record (arrays grown, reused across graphs).
 */
public final class CpuGraphAssembler {
    private static final int FUSION_INHERITED = -2;
    private static final int FUSION_MISMATCHES_BEFORE_PROBING = 3;

    private final NodeNaming naming;
    private final CpuGraph graph = new CpuGraph();
    private final List<CpuGraphListener> listeners = new ArrayList<>();
    /** The highest graph_seq any record named (the DAG tags llama_decode calls with it). */
    private long latestSeq;

    private final List<long[]> fusedGroups = new ArrayList<>(); // {group, tensor, nextTensor}
    private int fusedFromTid = -1;
    /**
     * The fused groups of the graph whose nodes were read last. A reused graph runs the same fusion, so the
     * probes stop reporting fused calls for it (a ring-buffer record per fused call per thread saved: dozens a
     * token on a llama-style model) and it inherits these; a different fusion would not match its barrier count.
     */
    private final List<long[]> readGraphFusedGroups = new ArrayList<>();
    /** Patterns to infer fused groups with while the fused calls are not probed (null: every group reported). */
    private FusionRule fusion;
    private volatile boolean fusedCallsProbed = true;
    /** The fused groups of the graph being assembled (and of the graph read last) were inferred, not reported. */
    private boolean fusionInferred;
    private boolean readGraphFusionInferred;
    /** An inferred fusion did not match a thread's barrier count: the fused calls must be probed. */
    private volatile boolean fusedCallsNeeded;
    private int fusionMismatchesInARow;

    /** Layouts worked out last, for the loop that skips nodes and for the older one that runs every node. */
    private GroupLayout groupedLayout;
    private GroupLayout everyNodeLayout;

    private boolean inFlightAtEnd;

    /** The op names groups are known by, capped (the target chooses op ids and fusions). */
    private final OpNames opNames = new OpNames();
    /** Node groups of attributed graphs named "other" because their op name was past the cap. */
    private long opGroupsFolded;

    public CpuGraphAssembler(NodeNaming naming) {
        this.naming = naming;
    }

    /** Adds a listener, told each finished graph after the ones added before it. */
    public void addListener(CpuGraphListener listener) {
        listeners.add(listener);
    }

    public NodeNaming naming() {
        return naming;
    }

    /** Distinct op names groups are known by now (at most {@link #MAX_OP_NAMES}, "other" among them). */
    public int opNames() {
        return opNames.size();
    }

    /** Node groups of attributed graphs whose op name was past {@link #MAX_OP_NAMES}: counted under "other". */
    public long opGroupsFolded() {
        return opGroupsFolded;
    }

    /** Op names kept: see {@link OpNames}. */
    public static final int MAX_OP_NAMES = OpNames.MAX_OP_NAMES;

    /** The highest graph_seq seen in any record so far. */
    public long latestSeq() {
        return latestSeq;
    }

    // --- Fusion policy (the session switches the fused-call probes) ---

    /**
     * Fused groups come from the graph and these patterns while {@code probed} is false (the fused calls are
     * not probed); from the probes' reports while it is true.
     */
    public void fusion(FusionRule patterns, boolean probed) {
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

    // --- Records ---

    /**
     * Another layer's record says graph {@code seq} starts (the MoE layer's graph record comes before the
     * nodes): the graph before it is finished now, so its listeners see it before that layer moves on.
     */
    public void onGraphStart(long seq, long timeNs) {
        latestSeq = Math.max(latestSeq, seq);
        if (seq != graph.seq) {
            finishGraph();
            beginGraph(seq, timeNs);
        }
    }

    /** Node {@code index} of the {@code nodeCount} of graph {@code seq}, read when its compute started. */
    public void onNode(long seq, long startNs, int index, int nodeCount, long tensor, int op, int type, int flags,
                       int opParam0, long ne0, long ne1, long ne2, long ne3, long src0, long src1, long src2,
                       int nameId) {
        onGraphStart(seq, startNs);
        if (graph.nodesReadSeq != seq) {
            graph.nodesReadSeq = seq;
            graph.nodeCount = 0;
            graph.nodesExpected = 0;
            graph.nodesReceived = 0;
        }
        graph.nodesSeq = seq;
        if (index < 0 || index >= 1 << 16) {
            return;
        }
        graph.nodesExpected = Math.max(graph.nodesExpected, nodeCount);
        graph.nodesReceived++;
        graph.ensureNodes(index + 1);
        graph.tensors[index] = tensor;
        graph.ops[index] = op;
        graph.opParams[index] = opParam0;
        graph.flags[index] = flags;
        graph.types[index] = type;
        graph.nameIds[index] = nameId;
        graph.sources[index * 3] = src0;
        graph.sources[index * 3 + 1] = src1;
        graph.sources[index * 3 + 2] = src2;
        graph.shapes[index * 4] = ne0;
        graph.shapes[index * 4 + 1] = ne1;
        graph.shapes[index * 4 + 2] = ne2;
        graph.shapes[index * 4 + 3] = ne3;
        graph.nodeCount = Math.max(graph.nodeCount, index + 1);
    }

    /** Graph {@code seq} is identical to graph {@code sameAsSeq}, whose nodes were read: it runs those. */
    public void onGraphSame(long seq, long sameAsSeq, long timeNs) {
        if (seq == graph.seq) {
            // Begun by another layer's record: keep it (its arrivals may already be counted).
        } else {
            onGraphStart(seq, timeNs);
        }
        if (sameAsSeq != graph.nodesReadSeq || graph.nodeCount == 0 || !graph.nodesWhole()) {
            // The nodes it refers to never arrived, or only part (ring full, layer switched on since): cannot
            // attribute. Nor is it a fusion the barrier counts deny: the groups would come from part of a list.
            graph.nodesLost = true;
            return;
        }
        graph.nodesSeq = sameAsSeq;
        fusedGroups.clear();
        fusedGroups.addAll(readGraphFusedGroups);
        fusedFromTid = FUSION_INHERITED;
        fusionInferred = readGraphFusionInferred;
    }

    /** A fused call one thread reported: group {@code group} ran the nodes from {@code tensor} to {@code nextTensor}. */
    public void onFused(int tid, long seq, int group, long tensor, long nextTensor) {
        if (seq != graph.seq) {
            return;
        }
        if (fusedFromTid == -1) {
            fusedFromTid = tid;
        }
        if (tid == fusedFromTid) {
            fusedGroups.add(new long[] {group, tensor, nextTensor});
        }
    }

    /** One thread's start and barrier arrivals over graph {@code seq} ({@code count} longs at {@code tsOffset}). */
    public void onArrivals(int tid, long seq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                           ArrivalTimes arrivals) {
        int count = arrivals.count();
        if (seq != graph.seq) {
            return; // its graph was not begun (ring full, or the layer was switched on mid-graph)
        }
        int t = threadIndex(tid);
        if (t < 0) {
            return;
        }
        graph.threadStartNs[t] = startNs;
        graph.cpuFirst[t] = cpuFirst;
        graph.cpuLast[t] = cpuLast;
        graph.migrated[t] = migrated;
        if (count > graph.arrivals[t].length) {
            graph.arrivals[t] = new long[Math.max(count, Math.max(2048, graph.arrivals[t].length * 2))];
        }
        arrivals.copyTo(graph.arrivals[t]);
        graph.arrivalCounts[t] = count;
    }

    private int threadIndex(int tid) {
        for (int t = 0; t < graph.threadCount; t++) {
            if (graph.tids[t] == tid) {
                return t;
            }
        }
        if (graph.threadCount == CpuGraph.MAX_THREADS) {
            return -1;
        }
        int t = graph.threadCount++;
        graph.tids[t] = tid;
        graph.threadStartNs[t] = 0;
        graph.arrivalCounts[t] = 0;
        graph.migrated[t] = false;
        return t;
    }

    private void beginGraph(long seq, long startNs) {
        graph.seq = seq;
        graph.startNs = startNs;
        graph.nodesSeq = -1;
        graph.nodesLost = false;
        graph.threadCount = 0;
        graph.layout = null;
        fusedGroups.clear();
        fusedFromTid = -1;
        fusionInferred = false;
    }

    // --- Finishing ---

    /** At the end of tracing: finishes the last graph, in flight if no thread reported. */
    public void finishLastGraph() {
        inFlightAtEnd = true;
        finishGraph();
        inFlightAtEnd = false;
    }

    /** Finishes the graph being assembled: works out its groups and times, then tells every listener. */
    public void finishGraph() {
        if (graph.seq < 0) {
            return;
        }
        graph.status = status();
        if (graph.status != CpuGraph.Status.ATTRIBUTED) {
            graph.layout = null;
        } else {
            opGroupsFolded += graph.layout.foldedGroups;
        }
        for (int i = 0; i < listeners.size(); i++) {
            listeners.get(i).onGraph(graph);
        }
        graph.seq = -1;
    }

    private CpuGraph.Status status() {
        if (graph.seq == graph.nodesReadSeq && !graph.nodesWhole()) {
            graph.nodesLost = true; // its own list lacks its tail (the ring filled while it was read)
        }
        if (!graph.nodesKnown()) {
            return graph.nodesLost ? CpuGraph.Status.UNATTRIBUTED : CpuGraph.Status.NOT_READ;
        }
        if (graph.seq == graph.nodesReadSeq) {
            if (!fusedCallsProbed && fusion != null && fusedGroups.isEmpty()) {
                inferFusion();
                fusionInferred = !fusedGroups.isEmpty();
            }
            readGraphFusedGroups.clear();
            readGraphFusedGroups.addAll(fusedGroups);
            readGraphFusionInferred = fusionInferred;
        }
        if (graph.threadCount == 0 && inFlightAtEnd) {
            return CpuGraph.Status.IN_FLIGHT;
        }
        graph.layout = layout(false);
        if (fusionInferred) {
            if (!arrivalsExact()) {
                // Not the groups the loop ran: a graph the layer was switched on in the middle of, or the target
                // did not fuse every run the patterns match (e.g. a type it cannot fuse). Do not guess; after a
                // few such graphs in a row (a reused graph repeats its fusion, a switch does not), probe.
                if (++fusionMismatchesInARow >= FUSION_MISMATCHES_BEFORE_PROBING) {
                    fusedCallsNeeded = true;
                }
                return CpuGraph.Status.UNATTRIBUTED;
            }
            fusionMismatchesInARow = 0;
        }
        // Older releases (before GGML_TENSOR_FLAG_COMPUTE) run every node, empty ones included, with a
        // barrier after each: when the arrivals fit that and not the current loop, each node is a group.
        if (!graph.arrivalsFit(graph.layout.size(), 1) && graph.arrivalsFit(graph.nodeCount, 0)) {
            graph.layout = layout(true);
        }
        if (graph.layout.size() == 0 || !graph.arrivalsFit(graph.layout.size(), 1)) {
            return CpuGraph.Status.UNATTRIBUTED;
        }
        graph.attribute();
        return CpuGraph.Status.ATTRIBUTED;
    }

    /**
     * Whether every thread reached the barrier exactly as often as the loop does with these groups: once after
     * each group, except after a group ending at the graph's last node (the loop skips that one), plus once
     * after the loop. No slack: an inferred fusion one group off must not pass.
     */
    private boolean arrivalsExact() {
        GroupLayout layout = graph.layout;
        int groups = layout.size();
        return groups > 0
                && graph.arrivalsFit(groups + (layout.lastNode[groups - 1] == graph.nodeCount - 1 ? 0 : 1), 0);
    }

    /**
     * The fused groups of the graph read (no fused call is reported: they are not probed): each run of
     * consecutive nodes matching a pattern, starting at an executed node. Right when the target fused every
     * such run, which the barrier counts then confirm exactly ({@link #arrivalsExact}).
     */
    private void inferFusion() {
        int nodeCount = graph.nodeCount;
        for (int i = 0; i < nodeCount; i++) {
            if (!NodeGroups.executes(naming, graph.ops[i], graph.flags[i])) {
                continue;
            }
            for (int[] pattern : fusion.patterns()) {
                if (i + pattern.length <= nodeCount && runMatches(i, pattern)) {
                    int last = i + pattern.length - 1;
                    fusedGroups.add(new long[] {i, graph.tensors[i], graph.tensors[last]});
                    i = last;
                    break;
                }
            }
        }
    }

    private boolean runMatches(int first, int[] pattern) {
        for (int k = 0; k < pattern.length; k++) {
            if (graph.ops[first + k] != pattern[k]) {
                return false;
            }
        }
        return true;
    }

    /** The groups of the node list held: the layout worked out last when nothing it depends on changed. */
    private GroupLayout layout(boolean everyNode) {
        long fusedSignature = 0x9e3779b97f4a7c15L;
        for (long[] fused : fusedGroups) {
            fusedSignature = (fusedSignature ^ fused[0]) * 0x100000001b3L;
            fusedSignature = (fusedSignature ^ fused[1]) * 0x100000001b3L;
            fusedSignature = (fusedSignature ^ fused[2]) * 0x100000001b3L;
        }
        GroupLayout cached = everyNode ? everyNodeLayout : groupedLayout;
        if (cached != null && cached.fusedSignature == fusedSignature) {
            if (cached.nodesReadSeq == graph.nodesReadSeq) {
                return cached;
            }
            if (cached.sameNodes(graph)) {
                cached.nodesReadSeq = graph.nodesReadSeq;
                return cached;
            }
        }
        GroupLayout layout = new GroupLayout(graph, fusedSignature, everyNode, everyNode
                ? NodeGroups.everyNode(graph.nodeCount)
                : NodeGroups.groups(graph.nodeCount, graph.tensors, graph.ops, graph.flags, naming, fusedGroups),
                naming, opNames);
        if (everyNode) {
            everyNodeLayout = layout;
        } else {
            groupedLayout = layout;
        }
        return layout;
    }
}
