package dev.infertop.agg;

import dev.infertop.event.EventLayout;
import dev.infertop.event.OpCounts;
import dev.infertop.event.TraceListener;
import dev.infertop.model.BackendNames;
import dev.infertop.model.BackendOps;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;

import java.util.ArrayList;
import java.util.List;

/**
 * Ops per backend for the backends other than the CPU (BLAS, CUDA, ...): a graph's per-op node counts arrive
 * when its compute starts (EVENT_BACKEND_OPS), its duration when the same thread's
 * ggml_backend_graph_compute_async returns (EVENT_GRAPH). A graph whose computing nodes all have one op
 * (a BLAS split of matmuls, with views around them) gives that op its time; a mixed graph's time stays with
 * the backend only. Where the host records a device backend's nodes one by one (Vulkan), each graph followed
 * whole says, per op, how many nodes it was called for and how many an earlier node's fused dispatch computed
 * (EVENT_BACKEND_DISPATCH, sent just before the graph's EVENT_GRAPH): kept only for a graph whose op counts
 * came too. Single writer: the collector thread; no allocation per event once a thread and a backend were seen.
 */
public final class BackendOpsAggregator implements LayerAggregator, GraphComputeListener {
    /** Slots per graph record (native/events.h BACKEND_OP_SLOTS). */
    public static final int OP_SLOTS = 128;
    private static final int MAX_THREADS = 256;

    private final BackendKeys backendKeys;
    private final OpNaming naming;

    // Counts of the graph each thread started, until its compute returns.
    private final int[] pendingTid = new int[MAX_THREADS];
    private final long[] pendingGuidHigh = new long[MAX_THREADS];
    private final long[] pendingGuidLow = new long[MAX_THREADS];
    private final int[][] pendingCounts = new int[MAX_THREADS][];
    private final boolean[] pendingValid = new boolean[MAX_THREADS];
    private int pendingThreads;

    /** Per {@link BackendKeys} index, the last being "other"; null until a graph ran there. */
    private final Slot[] slots = new Slot[BackendKeys.MAX_BACKENDS + 1];
    private static final int NODES = 0;
    private static final int TIME_NS = 1;
    private static final int UNTIMED_NODES = 2;
    private static final int DISPATCH_CALLS = OP_SLOTS * 3;
    private static final int DISPATCH_FUSED = OP_SLOTS * 4;
    private static final int GRAPHS = OP_SLOTS * 5;
    private static final int BUSY_NS = OP_SLOTS * 5 + 1;
    private static final int DISPATCH_GRAPHS = OP_SLOTS * 5 + 2;

    private static final class Slot {
        final String name;
        // Per op: NODES, TIME_NS, UNTIMED_NODES at [op * 3 + k], its dispatch calls and fused nodes at
        // [DISPATCH_CALLS + op] and [DISPATCH_FUSED + op]; then graphs, busy time, graphs followed node by node.
        final Counts counts = new Counts(OP_SLOTS * 5 + 3);

        Slot(String name) {
            this.name = name;
        }
    }

    /**
     * With backends keyed on their own (tests).
     *
     * @param naming op names and which ops compute nothing (views); null names ops by number
     */
    public BackendOpsAggregator(BackendNames backendNames, OpNaming naming) {
        this(new BackendKeys(backendNames), naming);
    }

    /**
     * @param backendKeys the backends as the graph layer keys them ({@link TraceAggregator#backendKeys()}), so that
     *                    both keep the same GUIDs and fold the same ones into "other"
     * @param naming      op names and which ops compute nothing (views); null names ops by number
     */
    public BackendOpsAggregator(BackendKeys backendKeys, OpNaming naming) {
        this.backendKeys = backendKeys;
        this.naming = naming;
    }

    /** A graph starts on a non-CPU backend: its nodes per op id. */
    public void onBackendOps(int tid, long guidHigh, long guidLow, OpCounts nodes) {
        int at = pendingIndex(tid);
        if (at < 0) {
            return;
        }
        pendingGuidHigh[at] = guidHigh;
        pendingGuidLow[at] = guidLow;
        pendingValid[at] = true;
        int[] counts = pendingCounts[at];
        for (int op = 0; op < OP_SLOTS; op++) {
            counts[op] = op < nodes.size() ? nodes.at(op) : 0;
        }
    }

    @Override
    public void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow) {
        onGraphCompute(tid, guidHigh, guidLow, Math.max(0, endNs - startNs));
    }

    /** The thread's ggml_backend_graph_compute_async returned after {@code durationNs}. */
    public void onGraphCompute(int tid, long guidHigh, long guidLow, long durationNs) {
        int at = -1;
        for (int i = 0; i < pendingThreads; i++) {
            if (pendingTid[i] == tid) {
                at = i;
                break;
            }
        }
        if (at < 0 || !pendingValid[at]) {
            return; // a CPU graph, or one whose start was not counted
        }
        pendingValid[at] = false; // consumed: the next graph's counts replace these
        int[] counts = pendingCounts[at];
        if (pendingGuidHigh[at] != guidHigh || pendingGuidLow[at] != guidLow) {
            return;
        }
        Slot slot = slot(guidHigh, guidLow);
        int computingOp = -1;
        boolean oneOp = true;
        for (int op = 0; op < OP_SLOTS; op++) {
            if (counts[op] == 0 || isView(op)) {
                continue;
            }
            if (computingOp >= 0) {
                oneOp = false;
            }
            computingOp = op;
        }
        for (int op = 0; op < OP_SLOTS; op++) {
            int n = counts[op];
            if (n == 0) {
                continue;
            }
            slot.counts.add(op * 3 + NODES, n);
            if (!oneOp && !isView(op)) {
                slot.counts.add(op * 3 + UNTIMED_NODES, n);
            }
        }
        if (oneOp && computingOp >= 0) {
            slot.counts.add(computingOp * 3 + TIME_NS, durationNs);
        }
        slot.counts.add(GRAPHS, 1);
        slot.counts.add(BUSY_NS, durationNs);
    }

    /**
     * The thread's graph was recorded node by node: per op id the nodes its dispatch called for and the nodes an
     * earlier node's fused dispatch computed. Kept if that graph's op counts came at its start.
     */
    public void onBackendDispatch(int tid, long guidHigh, long guidLow, OpCounts calls, OpCounts fused) {
        int at = pendingOf(tid);
        if (at < 0 || !pendingValid[at] || pendingGuidHigh[at] != guidHigh || pendingGuidLow[at] != guidLow) {
            return;
        }
        Slot slot = slot(guidHigh, guidLow);
        for (int op = 0; op < Math.min(OP_SLOTS, Math.min(calls.size(), fused.size())); op++) {
            slot.counts.add(DISPATCH_CALLS + op, calls.at(op));
            slot.counts.add(DISPATCH_FUSED + op, fused.at(op));
        }
        slot.counts.add(DISPATCH_GRAPHS, 1);
    }

    private int pendingOf(int tid) {
        for (int i = 0; i < pendingThreads; i++) {
            if (pendingTid[i] == tid) {
                return i;
            }
        }
        return -1;
    }

    private boolean isView(int op) {
        return naming != null && naming.isEmpty(op);
    }

    private int pendingIndex(int tid) {
        for (int i = 0; i < pendingThreads; i++) {
            if (pendingTid[i] == tid) {
                return i;
            }
        }
        if (pendingThreads == MAX_THREADS) {
            // A thread per request: a thread with no graph in flight gives its entry to the new one.
            for (int i = 0; i < pendingThreads; i++) {
                if (!pendingValid[i]) {
                    pendingTid[i] = tid;
                    return i;
                }
            }
            return -1;
        }
        pendingTid[pendingThreads] = tid;
        pendingCounts[pendingThreads] = new int[OP_SLOTS];
        return pendingThreads++;
    }

    private Slot slot(long guidHigh, long guidLow) {
        int index = backendKeys.indexOf(guidHigh, guidLow);
        Slot slot = slots[index];
        if (slot == null) {
            slot = slots[index] = new Slot(backendKeys.name(index));
        }
        return slot;
    }

    private String opName(int op) {
        if (op == OP_SLOTS - 1) {
            return "OP>=" + (OP_SLOTS - 1);
        }
        return naming == null ? "op" + op : naming.opName(op, 0);
    }

    /** The graph layer's records carry the backends' op counts. */
    @Override
    public Layer layer() {
        return Layer.GRAPH;
    }

    /** The op counts of a graph on another backend, as the decoder reads them (its time comes with the graph's). */
    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onBackendOps(int tid, long startNs, long backendAddress, long guidHigh, long guidLow, int nNodes,
                                 int counted, OpCounts nodes) {
            BackendOpsAggregator.this.onBackendOps(tid, guidHigh, guidLow, nodes);
        }

        @Override
        public void onBackendDispatch(int tid, long startNs, long endNs, long guidHigh, long guidLow, int nNodes,
                                      int calls, OpCounts opCalls, OpCounts opFused) {
            BackendOpsAggregator.this.onBackendDispatch(tid, guidHigh, guidLow, opCalls, opFused);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_BACKEND_OPS || kind == EventLayout.EVENT_BACKEND_DISPATCH ? decoded : null;
    }

    @Override
    public Figures addInterval(Figures figures) {
        return figures.withBackendOps(interval());
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withBackendOps(totals());
    }

    /** Per backend, ops by time then node count (largest first), since the previous call, which it closes. */
    public List<BackendOps> interval() {
        List<BackendOps> result = snapshot(false);
        for (Slot slot : slots) {
            if (slot != null) {
                slot.counts.sample();
            }
        }
        return result;
    }

    /** The same for the run so far. */
    public List<BackendOps> totals() {
        return snapshot(true);
    }

    /** The node-by-node dispatch over the span, or null where no graph of the backend was followed so. */
    private BackendOps.NodeDispatch dispatch(Counts c, boolean totals) {
        long graphs = c.of(DISPATCH_GRAPHS, totals);
        if (graphs == 0 && c.total(DISPATCH_GRAPHS) == 0) {
            return null;
        }
        List<BackendOps.OpDispatch> ops = new ArrayList<>();
        for (int op = 0; op < OP_SLOTS; op++) {
            long calls = c.of(DISPATCH_CALLS + op, totals);
            long fused = c.of(DISPATCH_FUSED + op, totals);
            if (calls > 0 || fused > 0) {
                ops.add(new BackendOps.OpDispatch(opName(op), calls, fused, isView(op)));
            }
        }
        ops.sort((a, b) -> Long.compare(b.calls() + b.fused(), a.calls() + a.fused()));
        return new BackendOps.NodeDispatch(graphs, ops);
    }

    private List<BackendOps> snapshot(boolean totals) {
        List<BackendOps> result = new ArrayList<>();
        for (Slot slot : slots) {
            if (slot == null) {
                continue;
            }
            Counts c = slot.counts;
            List<BackendOps.Op> ops = new ArrayList<>();
            for (int op = 0; op < OP_SLOTS; op++) {
                long nodes = c.of(op * 3 + NODES, totals);
                if (nodes > 0) {
                    ops.add(new BackendOps.Op(opName(op), nodes, c.of(op * 3 + TIME_NS, totals),
                            c.of(op * 3 + UNTIMED_NODES, totals) == 0 && !isView(op)));
                }
            }
            ops.sort((a, b) -> a.timeNs() != b.timeNs() ? Long.compare(b.timeNs(), a.timeNs())
                    : Long.compare(b.nodes(), a.nodes()));
            result.add(new BackendOps(slot.name, c.of(GRAPHS, totals), c.of(BUSY_NS, totals), ops,
                    dispatch(c, totals)));
        }
        return result;
    }
}
