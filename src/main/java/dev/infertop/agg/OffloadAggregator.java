package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.agg.graph.NodeNaming;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.event.TraceListener;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.OffloadTotals.Completion;

import java.util.ArrayList;
import java.util.List;

/**
 * Offload figures per backend: a device backend's compute call returns once its work is queued, so its graph
 * computes (the graph layer's, {@link GraphComputeListener}) stay open per backend instance until the host's next
 * ggml_backend_synchronize of that instance returns (EVENT_OFFLOAD): from the first open compute's entry to that
 * return is device-complete time, next to the computes' own enqueue time. The scheduler's input copies are counted
 * per tensor and destination backend (read from the copy's name, "BACKEND#name#N"). The CPU and BLAS compute in the
 * call ({@link Completion#IN_CALL}); a backend no synchronize of which was seen is "enqueue only". Single writer:
 * the collector thread; no allocation per event once a backend instance and a copied tensor were seen.
 */
public final class OffloadAggregator implements LayerAggregator, GraphComputeListener, DecodeListener,
        CpuGraphListener {
    /** Copied tensors kept by name and destination: the target chooses names, so the table is capped. */
    public static final int MAX_COPIES = 256;
    /** Backend instances (ggml_backend_t) followed at once: one per device per backend kind. */
    private static final int MAX_INSTANCES = 32;

    private static final int GRAPHS = 0;
    private static final int ENQUEUE_NS = 1;
    private static final int COMPLETED_GRAPHS = 2;
    private static final int COMPLETED_ENQUEUE_NS = 3;
    private static final int DEVICE_NS = 4;
    private static final int WAITS = 5;
    private static final int WAIT_NS = 6;
    private static final int COPIES_IN = 7;
    private static final int BYTES_IN = 8;
    private static final int COPY_NS = 9;
    private static final int COUNTERS = 10;

    private static final int COPY_COUNT = 0;
    private static final int COPY_BYTES = 1;
    private static final int COPY_TIME_NS = 2;

    private final BackendKeys backendKeys;
    private final NameTable names;
    private final Counts[] perBackend = new Counts[BackendKeys.MAX_BACKENDS + 1];

    // Per backend instance: the computes queued since its last synchronize.
    private final long[] instanceAddress = new long[MAX_INSTANCES];
    private final int[] instanceKey = new int[MAX_INSTANCES];
    private final long[] openStartNs = new long[MAX_INSTANCES];
    private final long[] openEnqueueNs = new long[MAX_INSTANCES];
    private final long[] openGraphs = new long[MAX_INSTANCES];
    private int instances;

    // Copied tensors, by source name id and destination backend name.
    private final int[] copySrcName = new int[MAX_COPIES];
    private final String[] copyTensor = new String[MAX_COPIES];
    private final String[] copyTo = new String[MAX_COPIES];
    private final int[] copyType = new int[MAX_COPIES];
    private final String[] copyShape = new String[MAX_COPIES];
    private final Counts[] copyCounts = new Counts[MAX_COPIES];
    private int copyEntries;
    private final Counts folded = new Counts(1);
    // The Vulkan backend's host dispatch: submits and their time, fence waits and their time.
    private final Counts vulkanDispatch = new Counts(4);

    // Bytes copied per thread since its last llama_decode returned, then given to that call's tokens.
    private static final int MAX_DECODING_THREADS = 16;
    private final int[] pendingTid = new int[MAX_DECODING_THREADS];
    private final long[] pendingBytes = new long[MAX_DECODING_THREADS];
    private int pendingThreads;
    private static final int PROMPT_TOKENS = 0;
    private static final int PROMPT_BYTES = 1;
    private static final int GENERATED_TOKENS = 2;
    private static final int GENERATED_BYTES = 3;
    private final Counts perToken = new Counts(4);

    // The CPU's computing nodes once a device computed (the operator layer's graphs, which it walks anyway), by
    // name id and op: a graph repeats its nodes in order, so the k-th node read is looked for at entry k first.
    public static final int MAX_CPU_NODES = 256;
    private final int[] stayedNameId = new int[MAX_CPU_NODES];
    private final int[] stayedOp = new int[MAX_CPU_NODES];
    private final String[] stayedOpName = new String[MAX_CPU_NODES];
    private final String[] stayedTensor = new String[MAX_CPU_NODES];
    private final String[] stayedShape = new String[MAX_CPU_NODES];
    private final Counts stayedRuns = new Counts(MAX_CPU_NODES);
    private int stayedEntries;
    private static final int CPU_GRAPHS = 0;
    private static final int CPU_NODES_FOLDED = 1;
    private final Counts stayedGraphs = new Counts(2);
    private boolean deviceComputed;
    private NodeNaming naming;

    /**
     * @param backendKeys the backends as the graph layer keys them ({@link TraceAggregator#backendKeys()})
     * @param names       the decoder's name table (copied tensors' names)
     */
    public OffloadAggregator(BackendKeys backendKeys, NameTable names) {
        this.backendKeys = backendKeys;
        this.names = names;
    }

    @Override
    public Layer layer() {
        return Layer.GRAPH;
    }

    @Override
    public void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow) {
        int key = backendKeys.indexOf(guidHigh, guidLow);
        Counts counts = counts(key);
        if (!deviceComputed && !computesInCall(backendKeys.name(key))) {
            deviceComputed = true;
        }
        long enqueueNs = Math.max(0, endNs - startNs);
        counts.add(GRAPHS, 1);
        counts.add(ENQUEUE_NS, enqueueNs);
        int at = instance(backendAddress, key);
        if (at < 0) {
            return;
        }
        if (openGraphs[at] == 0) {
            openStartNs[at] = startNs;
        }
        openGraphs[at]++;
        openEnqueueNs[at] += enqueueNs;
    }

    /** ggml_backend_synchronize(backendAddress) returned at {@code endNs}: what it queued is complete. */
    public void onBackendWait(long startNs, long endNs, long backendAddress, long guidHigh, long guidLow) {
        if (backendAddress == 0) {
            return; // an event wait: no backend to close
        }
        int key = backendKeys.indexOf(guidHigh, guidLow);
        Counts counts = counts(key);
        counts.add(WAITS, 1);
        counts.add(WAIT_NS, Math.max(0, endNs - startNs));
        int at = instance(backendAddress, key);
        if (at < 0 || openGraphs[at] == 0) {
            return;
        }
        counts.add(COMPLETED_GRAPHS, openGraphs[at]);
        counts.add(COMPLETED_ENQUEUE_NS, openEnqueueNs[at]);
        counts.add(DEVICE_NS, Math.max(0, endNs - openStartNs[at]));
        openGraphs[at] = 0;
        openEnqueueNs[at] = 0;
    }

    /** A tensor copied between backends' buffers; its destination's name says to which backend. */
    public void onTensorCopy(long startNs, long endNs, long bytes, int type, long ne0, long ne1, long ne2, long ne3,
                             int srcNameId, int dstNameId) {
        onTensorCopy(0, startNs, endNs, bytes, type, ne0, ne1, ne2, ne3, srcNameId, dstNameId);
    }

    /** As above, made by thread {@code tid}: its bytes wait for the llama_decode call it is part of to return. */
    public void onTensorCopy(int tid, long startNs, long endNs, long bytes, int type, long ne0, long ne1, long ne2,
                             long ne3, int srcNameId, int dstNameId) {
        int thread = pendingThread(tid);
        if (thread >= 0) {
            pendingBytes[thread] += bytes;
        }
        long copyNs = Math.max(0, endNs - startNs);
        int entry = copyEntry(srcNameId, dstNameId, type, ne0, ne1, ne2, ne3);
        String to = entry >= 0 ? copyTo[entry] : destination(names.name(dstNameId));
        if (entry >= 0) {
            copyCounts[entry].add(COPY_COUNT, 1);
            copyCounts[entry].add(COPY_BYTES, bytes);
            copyCounts[entry].add(COPY_TIME_NS, copyNs);
        } else {
            folded.add(0, 1);
        }
        int key = backendNamed(to);
        if (key >= 0) {
            Counts counts = counts(key);
            counts.add(COPIES_IN, 1);
            counts.add(BYTES_IN, bytes);
            counts.add(COPY_NS, copyNs);
        }
    }

    /**
     * A llama_decode call of {@code nTokens} returned on {@code tid}: the bytes its thread copied since the call
     * before are its tokens' (one token: a generated token; more: prompt tokens; none known: no token's).
     */
    @Override
    public void onDecodeCall(int tid, int nTokens, long latestGraphSeq) {
        int thread = pendingThread(tid);
        if (thread < 0) {
            return;
        }
        long bytes = pendingBytes[thread];
        pendingBytes[thread] = 0;
        if (nTokens == 1) {
            perToken.add(GENERATED_TOKENS, 1);
            perToken.add(GENERATED_BYTES, bytes);
        } else if (nTokens > 1) {
            perToken.add(PROMPT_TOKENS, nTokens);
            perToken.add(PROMPT_BYTES, bytes);
        }
    }

    /** It reads the CPU graphs the operator layer assembles: their nodes are what stayed on the CPU. */
    @Override
    public void followGraphs(CpuGraphAssembler assembler) {
        naming = assembler.naming();
        assembler.addListener(this);
    }

    /** A CPU graph after a device computed: its computing nodes stayed on the CPU. */
    @Override
    public void onGraph(CpuGraph graph) {
        if (!deviceComputed || !graph.nodesKnown()) {
            return;
        }
        stayedGraphs.add(CPU_GRAPHS, 1);
        int k = 0;
        for (int node = 0; node < graph.nodeCount(); node++) {
            if (!graph.executes(naming, node)) {
                continue;
            }
            int entry = stayedEntry(graph, node, k++);
            if (entry < 0) {
                stayedGraphs.add(CPU_NODES_FOLDED, 1);
            } else {
                stayedRuns.add(entry, 1);
            }
        }
    }

    private int stayedEntry(CpuGraph graph, int node, int k) {
        int nameId = graph.nameId(node);
        int op = graph.op(node);
        if (k < stayedEntries && stayedNameId[k] == nameId && stayedOp[k] == op) {
            return k;
        }
        for (int i = 0; i < stayedEntries; i++) {
            if (stayedNameId[i] == nameId && stayedOp[i] == op) {
                return i;
            }
        }
        if (stayedEntries == MAX_CPU_NODES) {
            return -1;
        }
        int at = stayedEntries++;
        stayedNameId[at] = nameId;
        stayedOp[at] = op;
        stayedOpName[at] = naming.opName(op, graph.opParam0(node));
        String name = nameId < 0 ? null : names.name(nameId);
        stayedTensor[at] = name == null || name.isEmpty() ? "(unnamed)" : name;
        stayedShape[at] = graph.ne(node, 0) + "x" + graph.ne(node, 1) + "x" + graph.ne(node, 2) + "x" + graph.ne(node, 3);
        return at;
    }

    /** The slot of {@code tid}'s copied bytes; -1 past the threads followed (their copies go in no token's). */
    private int pendingThread(int tid) {
        for (int i = 0; i < pendingThreads; i++) {
            if (pendingTid[i] == tid) {
                return i;
            }
        }
        if (pendingThreads == MAX_DECODING_THREADS) {
            return -1;
        }
        pendingTid[pendingThreads] = tid;
        return pendingThreads++;
    }

    /** The Vulkan backend submitted a batch of nodes, or ({@code fenceWait}) waited for its fence. */
    public void onHostDispatch(long startNs, long endNs, boolean fenceWait) {
        vulkanDispatch.add(fenceWait ? 2 : 0, 1);
        vulkanDispatch.add(fenceWait ? 3 : 1, Math.max(0, endNs - startNs));
    }

    /** The backend key whose name the scheduler's copy prefix starts with ("Vulkan0" is the Vulkan backend's). */
    private int backendNamed(String to) {
        int best = -1;
        for (int i = 0; i < backendKeys.count(); i++) {
            String name = backendKeys.name(i);
            if (to.startsWith(name) && (best < 0 || name.length() > backendKeys.name(best).length())) {
                best = i;
            }
        }
        return best;
    }

    /** "Vulkan0#attn_norm-0#0" → "Vulkan0"; a name without the scheduler's form → "unknown". */
    static String destination(String dstName) {
        int hash = dstName == null ? -1 : dstName.indexOf('#');
        return hash > 0 ? dstName.substring(0, hash) : "unknown";
    }

    private int copyEntry(int srcNameId, int dstNameId, int type, long ne0, long ne1, long ne2, long ne3) {
        String dst = null;
        for (int i = 0; i < copyEntries; i++) {
            if (copySrcName[i] == srcNameId) {
                if (dst == null) {
                    dst = destination(names.name(dstNameId));
                }
                if (copyTo[i].equals(dst)) {
                    return i;
                }
            }
        }
        if (copyEntries == MAX_COPIES) {
            return -1;
        }
        int at = copyEntries++;
        copySrcName[at] = srcNameId;
        String src = names.name(srcNameId);
        copyTensor[at] = src == null || src.isEmpty() ? "(unnamed)" : src;
        copyTo[at] = dst != null ? dst : destination(names.name(dstNameId));
        copyType[at] = type;
        copyShape[at] = ne0 + "x" + ne1 + "x" + ne2 + "x" + ne3;
        copyCounts[at] = new Counts(3);
        return at;
    }

    private int instance(long address, int key) {
        for (int i = 0; i < instances; i++) {
            if (instanceAddress[i] == address) {
                return i;
            }
        }
        if (instances == MAX_INSTANCES) {
            return -1;
        }
        instanceAddress[instances] = address;
        instanceKey[instances] = key;
        return instances++;
    }

    private Counts counts(int key) {
        Counts counts = perBackend[key];
        if (counts == null) {
            counts = perBackend[key] = new Counts(COUNTERS);
        }
        return counts;
    }

    /** The CPU and BLAS backends compute a graph inside their compute call: nothing is left queued. */
    private static boolean computesInCall(String name) {
        return name.equals("CPU") || name.equals("BLAS");
    }

    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onBackendWait(int tid, long startNs, long endNs, long backendAddress, long guidHigh,
                                  long guidLow) {
            OffloadAggregator.this.onBackendWait(startNs, endNs, backendAddress, guidHigh, guidLow);
        }

        @Override
        public void onTensorCopy(int tid, long startNs, long endNs, boolean async, long bytes, int type, long ne0,
                                 long ne1, long ne2, long ne3, int srcNameId, int dstNameId) {
            OffloadAggregator.this.onTensorCopy(tid, startNs, endNs, bytes, type, ne0, ne1, ne2, ne3, srcNameId,
                    dstNameId);
        }

        @Override
        public void onHostDispatch(int tid, long startNs, long endNs, boolean fenceWait) {
            OffloadAggregator.this.onHostDispatch(startNs, endNs, fenceWait);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_OFFLOAD ? decoded : null;
    }

    @Override
    public Figures addInterval(Figures figures) {
        OffloadTotals interval = figures(false);
        for (Counts counts : perBackend) {
            if (counts != null) {
                counts.sample();
            }
        }
        for (int i = 0; i < copyEntries; i++) {
            copyCounts[i].sample();
        }
        folded.sample();
        vulkanDispatch.sample();
        perToken.sample();
        stayedRuns.sample();
        stayedGraphs.sample();
        return figures.withOffload(interval);
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withOffload(figures(true));
    }

    /** The figures of the run so far ({@code totals}) or since the last interval. */
    public OffloadTotals figures(boolean totals) {
        List<OffloadTotals.Backend> backends = new ArrayList<>();
        for (int key = 0; key < perBackend.length; key++) {
            Counts c = perBackend[key];
            if (c == null) {
                continue;
            }
            String name = backendKeys.name(key);
            Completion completion = computesInCall(name) ? Completion.IN_CALL
                    : c.total(COMPLETED_GRAPHS) > 0 ? Completion.DEVICE_COMPLETE : Completion.ENQUEUE_ONLY;
            backends.add(new OffloadTotals.Backend(name, completion, c.of(GRAPHS, totals), c.of(ENQUEUE_NS, totals),
                    c.of(COMPLETED_GRAPHS, totals), c.of(COMPLETED_ENQUEUE_NS, totals),
                    completion == Completion.DEVICE_COMPLETE ? c.of(DEVICE_NS, totals) : 0, c.of(WAITS, totals),
                    c.of(WAIT_NS, totals), c.of(COPIES_IN, totals), c.of(BYTES_IN, totals), c.of(COPY_NS, totals)));
        }
        List<OffloadTotals.Copy> copies = new ArrayList<>();
        for (int i = 0; i < copyEntries; i++) {
            Counts c = copyCounts[i];
            long n = c.of(COPY_COUNT, totals);
            if (n > 0) {
                copies.add(new OffloadTotals.Copy(copyTensor[i], copyTo[i], copyType[i], copyShape[i], n,
                        c.of(COPY_BYTES, totals), c.of(COPY_TIME_NS, totals)));
            }
        }
        copies.sort((a, b) -> Long.compare(b.bytes(), a.bytes()));
        List<OffloadTotals.Dispatch> dispatch = vulkanDispatch.total(0) + vulkanDispatch.total(2) == 0 ? List.of()
                : List.of(new OffloadTotals.Dispatch("Vulkan", vulkanDispatch.of(0, totals),
                        vulkanDispatch.of(1, totals), vulkanDispatch.of(2, totals), vulkanDispatch.of(3, totals)));
        OffloadTotals.TokenBytes tokens = new OffloadTotals.TokenBytes(perToken.of(PROMPT_TOKENS, totals),
                perToken.of(PROMPT_BYTES, totals), perToken.of(GENERATED_TOKENS, totals),
                perToken.of(GENERATED_BYTES, totals));
        List<OffloadTotals.StayedOnCpu.Node> stayed = new ArrayList<>();
        for (int i = 0; i < stayedEntries; i++) {
            long runs = stayedRuns.of(i, totals);
            if (runs > 0) {
                stayed.add(new OffloadTotals.StayedOnCpu.Node(stayedOpName[i], stayedTensor[i], stayedShape[i], runs));
            }
        }
        stayed.sort((a, b) -> Long.compare(b.runs(), a.runs()));
        OffloadTotals.StayedOnCpu onCpu = new OffloadTotals.StayedOnCpu(stayedGraphs.of(CPU_GRAPHS, totals), stayed,
                stayedGraphs.of(CPU_NODES_FOLDED, totals));
        return new OffloadTotals(backends, copies, folded.of(0, totals), dispatch, tokens, onCpu);
    }
}
