package dev.infertop.agg.graph;

import java.util.Arrays;

/**
 * One CPU graph compute as the probes saw it: its nodes (read once, or the list read for an earlier graph it
 * reuses), each thread's start and barrier arrivals, the node groups the loop ran and, when the arrivals fit
 * them, each group's barrier release and wall time. Assembled by {@link CpuGraphAssembler}; read by every
 * {@link CpuGraphListener}. Arrays are grown, never reallocated per graph: the object is the same for every graph.
 *
 * <p>The one barrier rule: the loop calls the barrier after each group, which releases when the last thread
 * arrives, so for group k
 * <pre>
 *   release(k)  = max over threads of arrival_t(k)         (release(-1) = the earliest thread start)
 *   work_t(k)   = arrival_t(k) - max(release(k-1), start_t)
 *   wait_t(k)   = release(k) - arrival_t(k)
 *   wall(k)     = release(k) - release(k-1)
 * </pre>
 */
public final class CpuGraph {
    /** What could be made of a graph. */
    public enum Status {
        /** Every thread's arrivals fit the groups: work, wait and wall time per group are known. */
        ATTRIBUTED,
        /** Nodes known (or referred to and lost) but the arrivals fit no grouping: counted, not guessed. */
        UNATTRIBUTED,
        /** No node record came for it (only another layer's record named it): nothing to attribute. */
        NOT_READ,
        /** Still running when tracing stopped (no thread reported): neither attributed nor a failure. */
        IN_FLIGHT
    }

    /** Threads followed per graph (a wider pool's extra threads are not attributed). */
    public static final int MAX_THREADS = 256;

    // The graph.
    long seq = -1;
    long startNs;
    /** graph_seq of the node list this graph ran (its own, or the one it reuses); -1 when not known. */
    long nodesSeq = -1;
    /** A "same graph" record referred to nodes that never arrived, or its own list came without its tail. */
    boolean nodesLost;
    Status status = Status.NOT_READ;

    // The node list read last (graph_seq nodesReadSeq), kept for the graphs that reuse it.
    long nodesReadSeq = -1;
    int nodeCount;
    /** The list's length as its records say (cgraph->n_nodes) and the records that came of it. */
    int nodesExpected;
    int nodesReceived;
    long[] tensors = new long[2048];
    int[] ops = new int[2048];
    int[] opParams = new int[2048];
    int[] flags = new int[2048];
    int[] types = new int[2048];
    int[] nameIds = new int[2048];
    long[] sources = new long[2048 * 3];
    long[] shapes = new long[2048 * 4];

    // Each thread's start and arrivals.
    int threadCount;
    final int[] tids = new int[MAX_THREADS];
    final int[] cpuFirst = new int[MAX_THREADS];
    final int[] cpuLast = new int[MAX_THREADS];
    final boolean[] migrated = new boolean[MAX_THREADS];
    final long[] threadStartNs = new long[MAX_THREADS];
    final long[][] arrivals = new long[MAX_THREADS][];
    final int[] arrivalCounts = new int[MAX_THREADS];

    // Groups and their times (set when attributed).
    GroupLayout layout;
    long[] releaseNs = new long[2048];
    long[] nodeWallNs = new long[2048];
    boolean[] nodeRan = new boolean[2048];

    CpuGraph() {
        for (int t = 0; t < MAX_THREADS; t++) {
            arrivals[t] = new long[0];
        }
    }

    void ensureNodes(int count) {
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
        sources = Arrays.copyOf(sources, capacity * 3);
        shapes = Arrays.copyOf(shapes, capacity * 4);
    }

    // --- The graph ---

    public long seq() {
        return seq;
    }

    /** graph_seq of the node list it ran (a reused graph points back at the one read). */
    public long nodesReadSeq() {
        return nodesReadSeq;
    }

    public Status status() {
        return status;
    }

    public boolean attributed() {
        return status == Status.ATTRIBUTED;
    }

    /** Whether the nodes below are this graph's (read for it, or for the graph it reuses), every one of them. */
    public boolean nodesKnown() {
        return nodesSeq >= 0 && nodesSeq == nodesReadSeq && nodeCount > 0 && nodesWhole();
    }

    /**
     * Whether the list read last came whole: the probe stops reading a graph's nodes when the ring is full, so
     * a list can lack its tail. Groups laid out from part of a list match no thread's barrier count.
     */
    boolean nodesWhole() {
        return nodeCount == nodesExpected && nodesReceived == nodesExpected;
    }

    /** A graph that referred to a node list never received (counted as unattributed by the operator layer). */
    public boolean nodesLost() {
        return nodesLost;
    }

    // --- Nodes (valid when nodesKnown) ---

    public int nodeCount() {
        return nodeCount;
    }

    public long tensor(int node) {
        return tensors[node];
    }

    public int op(int node) {
        return ops[node];
    }

    public int opParam0(int node) {
        return opParams[node];
    }

    public int flags(int node) {
        return flags[node];
    }

    public int type(int node) {
        return types[node];
    }

    /** Interned tensor name id (NameTable), -1 when unnamed. */
    public int nameId(int node) {
        return nameIds[node];
    }

    /** The address of source {@code s} (0..2) of a node, 0 when none. */
    public long src(int node, int s) {
        return sources[node * 3 + s];
    }

    /** Dimension {@code d} (0..3) of a node's shape, ne[d]. */
    public long ne(int node, int d) {
        return shapes[node * 4 + d];
    }

    /** Whether the CPU loop runs the node: not an empty op, and the COMPUTE flag set where the release has it. */
    public boolean executes(NodeNaming naming, int node) {
        return NodeGroups.executes(naming, ops[node], flags[node]);
    }

    // --- Threads ---

    public int threadCount() {
        return threadCount;
    }

    public int tid(int thread) {
        return tids[thread];
    }

    public int lastCpu(int thread) {
        return cpuLast[thread];
    }

    public boolean migrated(int thread) {
        return migrated[thread];
    }

    public long threadStartNs(int thread) {
        return threadStartNs[thread];
    }

    /** The thread's barrier arrivals (the first {@link #arrivalCount} are valid). */
    public long[] arrivals(int thread) {
        return arrivals[thread];
    }

    public int arrivalCount(int thread) {
        return arrivalCounts[thread];
    }

    /**
     * Whether every thread's arrival count fits {@code groupCount} groups: the loop's barrier follows every
     * group but the last when it ends the graph, and the barrier after the loop follows it, so G arrivals, or
     * G + {@code extra} when trailing nodes were skipped.
     */
    boolean arrivalsFit(int groupCount, int extra) {
        if (threadCount == 0) {
            return false;
        }
        for (int t = 0; t < threadCount; t++) {
            if (arrivalCounts[t] < groupCount || arrivalCounts[t] > groupCount + extra) {
                return false;
            }
        }
        return true;
    }

    /**
     * Barrier k's wall time from the arrivals alone, whatever the grouping: release(k) − release(k−1), or −1
     * when a thread did not arrive k + 1 times (the MoE layer times groups of a plan made for an earlier graph).
     */
    public long barrierWallNs(int k) {
        if (threadCount == 0) {
            return -1;
        }
        long release = 0;
        long previous = k == 0 ? Long.MAX_VALUE : 0;
        for (int t = 0; t < threadCount; t++) {
            if (arrivalCounts[t] <= k) {
                return -1;
            }
            release = Math.max(release, arrivals[t][k]);
            previous = k == 0 ? Math.min(previous, threadStartNs[t]) : Math.max(previous, arrivals[t][k - 1]);
        }
        return Math.max(0, release - previous);
    }

    // --- Groups (valid when attributed; the layout also when only the plan fits) ---

    public int groupCount() {
        return layout == null ? 0 : layout.size();
    }

    public int firstNode(int group) {
        return layout.firstNode[group];
    }

    public int lastNode(int group) {
        return layout.lastNode[group];
    }

    /** The op name of each group ("RMS_NORM+MUL" for a fused one); the same array while the layout is. */
    public String[] groupOpNames() {
        return layout.opNames;
    }

    /**
     * The grouping's identity: the same object for every graph that runs the same nodes the same way, so a
     * listener may key per-group work on it ({@code ==}).
     */
    public Object layoutKey() {
        return layout;
    }

    /** Whether the groups are the older loop's, one per node, empty nodes included. */
    public boolean everyNode() {
        return layout != null && layout.everyNode;
    }

    /** The barrier release ending group k: the last thread's arrival. */
    public long releaseNs(int group) {
        return releaseNs[group];
    }

    /** The release before group k (the earliest thread start for the first group). */
    public long previousReleaseNs(int group) {
        if (group > 0) {
            return releaseNs[group - 1];
        }
        long start = Long.MAX_VALUE;
        for (int t = 0; t < threadCount; t++) {
            start = Math.min(start, threadStartNs[t]);
        }
        return start;
    }

    /** Group k's wall time: release(k) − release(k−1). */
    public long groupWallNs(int group) {
        return Math.max(0, releaseNs[group] - previousReleaseNs(group));
    }

    /** When thread t began group k's work: the release before it, or its own start if later. */
    public long workBeginNs(int thread, int group) {
        return group == 0 ? threadStartNs[thread] : Math.max(releaseNs[group - 1], threadStartNs[thread]);
    }

    /** A node's share of its group's wall time (a fused group's split evenly, the remainder on its first node). */
    public long nodeWallNs(int node) {
        return nodeWallNs[node];
    }

    /** Whether the node ran as part of a group (false for skipped nodes). */
    public boolean nodeRan(int node) {
        return nodeRan[node];
    }

    /** Sets releases and per-node times from the arrivals, for the groups of {@link #layout}. */
    void attribute() {
        int groups = layout.size();
        if (releaseNs.length < groups) {
            releaseNs = new long[Math.max(groups, releaseNs.length * 2)];
        }
        if (nodeWallNs.length < nodeCount) {
            nodeWallNs = new long[Math.max(nodeCount, nodeWallNs.length * 2)];
            nodeRan = new boolean[nodeWallNs.length];
        }
        for (int k = 0; k < groups; k++) {
            long release = 0;
            for (int t = 0; t < threadCount; t++) {
                release = Math.max(release, arrivals[t][k]);
            }
            releaseNs[k] = release;
        }
        Arrays.fill(nodeWallNs, 0, nodeCount, 0L);
        Arrays.fill(nodeRan, 0, nodeCount, false);
        long previous = previousReleaseNs(0);
        for (int k = 0; k < groups; k++) {
            long wallNs = Math.max(0, releaseNs[k] - previous);
            previous = releaseNs[k];
            int first = layout.firstNode[k];
            int last = layout.lastNode[k];
            int nodes = last - first + 1;
            for (int i = first; i <= last; i++) {
                nodeWallNs[i] = wallNs / nodes + (i == first ? wallNs % nodes : 0);
                nodeRan[i] = true;
            }
        }
        status = Status.ATTRIBUTED;
    }
}
