package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.NameTable;
import dev.infertop.model.GraphNode;
import dev.infertop.model.Layer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Keeps the nodes (with sources) and measured times of the last decode graph, for the operator DAG
 * ({@code dev.infertop.export.OperatorDag}). A decode graph is a CPU graph computed within a llama_decode
 * of one token; when a decode runs several CPU graphs (split between backends), the last one is kept.
 *
 * <p>Single writer, the collector thread: each attributed CPU graph ({@link CpuGraph}, with its nodes and
 * per-node times), decode records to tell decode graphs from prefill. Records arrive in ring order: a graph's
 * nodes, its arrivals, then the llama_decode that ran it; the graph is finished when the next one starts, so
 * a graph finished before its llama_decode is held as pending. Copying a graph costs a few array copies per
 * token; the immutable node list other threads read is built at most once per snapshot, in {@link #publish()}.
 */
public final class DagRecorder implements LayerAggregator, CpuGraphListener, DecodeListener {
    /** Decodes remembered to tag graphs attributed before their llama_decode record arrived. */
    private static final int DECODES_KEPT = 8;

    private final OpNaming naming;
    private final NameTable names;

    /** Names of the sources outside the graph of the node list read as {@code namedReadSeq}. */
    private String[] readSourceNames = new String[2048 * 3];

    /** An attributed graph whose llama_decode record has not come yet. */
    private final Buffers pending = new Buffers();
    private long pendingSeq = -1;
    /** The last decode graph. */
    private Buffers decode = new Buffers();
    private Buffers spare = new Buffers();
    private long decodeSeq = -1;
    private long publishedSeq = -1;
    private volatile List<GraphNode> published = List.of();

    /** Graph numbers seen so far, and the range each recent llama_decode covered. */
    private long lastGraphSeq;
    private long taggedUpTo;
    private final long[] decodeFrom = new long[DECODES_KEPT];
    private final long[] decodeTo = new long[DECODES_KEPT];
    private final int[] decodeTokens = new int[DECODES_KEPT];
    private int decodes;

    private static final class Buffers {
        int count;
        /** graph_seq of the node list held (nodes, shapes, sources and their names change only with it). */
        long nodesReadSeq = -1;
        long[] tensors = new long[2048];
        int[] ops = new int[2048];
        int[] opParams = new int[2048];
        int[] nameIds = new int[2048];
        long[] shapes = new long[2048 * 4];
        long[] sources = new long[2048 * 3];
        /** Names of sources outside the graph ("" inside it, or unknown), resolved once per node list read. */
        String[] sourceNames = new String[2048 * 3];
        long[] timeNs = new long[2048];
        boolean[] executed = new boolean[2048];

        void ensure(int n) {
            if (n <= tensors.length) {
                return;
            }
            int capacity = Math.max(n, tensors.length * 2);
            tensors = Arrays.copyOf(tensors, capacity);
            ops = Arrays.copyOf(ops, capacity);
            opParams = Arrays.copyOf(opParams, capacity);
            nameIds = Arrays.copyOf(nameIds, capacity);
            shapes = Arrays.copyOf(shapes, capacity * 4);
            sources = Arrays.copyOf(sources, capacity * 3);
            sourceNames = Arrays.copyOf(sourceNames, capacity * 3);
            timeNs = Arrays.copyOf(timeNs, capacity);
            executed = Arrays.copyOf(executed, capacity);
        }

        /** Copies an attributed graph's nodes and times, and its sources' names. */
        void copyFrom(CpuGraph graph, String[] names) {
            int n = graph.nodeCount();
            if (nodesReadSeq == graph.nodesReadSeq() && count == n) {
                // A reused graph (the node list these buffers hold): only its times are its own.
                for (int i = 0; i < n; i++) {
                    timeNs[i] = graph.nodeWallNs(i);
                    executed[i] = graph.nodeRan(i);
                }
                return;
            }
            ensure(n);
            count = n;
            nodesReadSeq = graph.nodesReadSeq();
            for (int i = 0; i < n; i++) {
                tensors[i] = graph.tensor(i);
                ops[i] = graph.op(i);
                opParams[i] = graph.opParam0(i);
                nameIds[i] = graph.nameId(i);
                for (int d = 0; d < 4; d++) {
                    shapes[i * 4 + d] = graph.ne(i, d);
                }
                for (int s = 0; s < 3; s++) {
                    sources[i * 3 + s] = graph.src(i, s);
                }
                timeNs[i] = graph.nodeWallNs(i);
                executed[i] = graph.nodeRan(i);
            }
            System.arraycopy(names, 0, sourceNames, 0, n * 3);
        }

        void copyFrom(Buffers from) {
            ensure(from.count);
            int n = from.count;
            count = n;
            nodesReadSeq = from.nodesReadSeq;
            System.arraycopy(from.tensors, 0, tensors, 0, n);
            System.arraycopy(from.ops, 0, ops, 0, n);
            System.arraycopy(from.opParams, 0, opParams, 0, n);
            System.arraycopy(from.nameIds, 0, nameIds, 0, n);
            System.arraycopy(from.shapes, 0, shapes, 0, n * 4);
            System.arraycopy(from.sources, 0, sources, 0, n * 3);
            System.arraycopy(from.sourceNames, 0, sourceNames, 0, n * 3);
            System.arraycopy(from.timeNs, 0, timeNs, 0, n);
            System.arraycopy(from.executed, 0, executed, 0, n);
        }
    }

    public DagRecorder(OpNaming naming, NameTable names) {
        this(naming, names, null);
    }

    /**
     * @param leafNames names a tensor outside the graph by its address (null when unknown), or null for none:
     *                  asked once per address, when the DAG is published, never on the event path
     */
    public DagRecorder(OpNaming naming, NameTable names, java.util.function.LongFunction<String> leafNames) {
        this.naming = naming;
        this.names = names;
        this.leafNames = leafNames;
    }

    private final java.util.function.LongFunction<String> leafNames;
    private final java.util.Map<Long, String> leafNameCache = new java.util.HashMap<>();

    private String leafName(long address) {
        if (leafNames == null || address == 0) {
            return "";
        }
        String name = leafNameCache.get(address);
        if (name == null) {
            String read = leafNames.apply(address);
            name = read == null ? "" : read;
            if (leafNameCache.size() < 1 << 16) {
                leafNameCache.put(address, name);
            }
        }
        return name;
    }

    /**
     * A llama_decode returned: the graphs since the previous one ran for it. {@code latestGraphSeq}: the
     * highest graph_seq of the CPU graph records so far ({@code CpuGraphAssembler.latestSeq()}).
     */
    @Override
    public void onDecodeCall(int tid, int nTokens, long latestGraphSeq) {
        onDecode(nTokens, latestGraphSeq);
    }

    /** {@link #onDecodeCall} without its thread (tests). */
    public void onDecode(int nTokens, long latestGraphSeq) {
        lastGraphSeq = Math.max(lastGraphSeq, latestGraphSeq);
        if (lastGraphSeq <= taggedUpTo) {
            return; // no CPU graph traced for it (operator layer off, or all on another backend)
        }
        int slot = decodes++ % DECODES_KEPT;
        decodeFrom[slot] = taggedUpTo + 1;
        decodeTo[slot] = lastGraphSeq;
        decodeTokens[slot] = nTokens;
        taggedUpTo = lastGraphSeq;
        if (pendingSeq >= decodeFrom[slot] && pendingSeq <= decodeTo[slot]) {
            if (nTokens == 1) {
                keep(pending, pendingSeq);
            }
            pendingSeq = -1;
        }
    }

    /** graph_seq of the node list whose sources were last named. */
    private long namedReadSeq = -1;

    /**
     * Names the sources outside the graph of the node list held (once per list read, i.e. every few dozen
     * tokens; each address asked once): while the target still runs, since a DAG may be written after it exits.
     */
    private void nameSources(CpuGraph graph) {
        int n = graph.nodeCount();
        if (readSourceNames.length < n * 3) {
            readSourceNames = new String[n * 3];
        }
        if (leafNames == null) {
            return; // all null: published as ""
        }
        if (namedReadSeq == graph.nodesReadSeq()) {
            return;
        }
        namedReadSeq = graph.nodesReadSeq();
        java.util.Set<Long> inGraph = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            inGraph.add(graph.tensor(i));
        }
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < 3; s++) {
                long source = graph.src(i, s);
                readSourceNames[i * 3 + s] = inGraph.contains(source) ? "" : leafName(source);
            }
        }
    }

    @Override
    public void onGraph(CpuGraph graph) {
        long graphSeq = graph.seq();
        lastGraphSeq = Math.max(lastGraphSeq, graphSeq);
        if (!graph.attributed()) {
            return;
        }
        nameSources(graph);
        if (graphSeq > taggedUpTo) {
            pending.copyFrom(graph, readSourceNames);
            pendingSeq = graphSeq;
            return;
        }
        for (int i = 0; i < Math.min(decodes, DECODES_KEPT); i++) {
            if (graphSeq >= decodeFrom[i] && graphSeq <= decodeTo[i]) {
                if (decodeTokens[i] == 1) {
                    spare.copyFrom(graph, readSourceNames);
                    keep(spare, graphSeq);
                }
                return;
            }
        }
    }

    private void keep(Buffers graph, long graphSeq) {
        if (graph == pending) {
            spare.copyFrom(pending);
            graph = spare;
        }
        Buffers previous = decode;
        decode = graph;
        spare = previous;
        decodeSeq = graphSeq;
    }

    /** Keeps the operator layer's last decode graph. */
    @Override
    public Layer layer() {
        return Layer.OPERATOR;
    }

    @Override
    public void followGraphs(CpuGraphAssembler graphs) {
        graphs.addListener(this);
    }

    @Override
    public void tick() {
        publish();
    }

    /** Builds the node list other threads read, when the last decode graph changed (collector thread). */
    public void publish() {
        if (decodeSeq == publishedSeq) {
            return;
        }
        publishedSeq = decodeSeq;
        Buffers graph = decode;
        List<GraphNode> nodes = new ArrayList<>(graph.count);
        for (int i = 0; i < graph.count; i++) {
            List<Long> sources = new ArrayList<>(3);
            List<String> sourceNames = new ArrayList<>(3);
            for (int s = 0; s < 3; s++) {
                sources.add(graph.sources[i * 3 + s]);
                String name = graph.sourceNames[i * 3 + s];
                sourceNames.add(name == null ? "" : name);
            }
            nodes.add(new GraphNode(i, graph.tensors[i], naming.opName(graph.ops[i], graph.opParams[i]),
                    graph.nameIds[i] < 0 ? "" : names.name(graph.nameIds[i]),
                    List.of(graph.shapes[i * 4], graph.shapes[i * 4 + 1], graph.shapes[i * 4 + 2],
                            graph.shapes[i * 4 + 3]),
                    sources, graph.timeNs[i], graph.executed[i], sourceNames));
        }
        published = List.copyOf(nodes);
    }

    /** The last decode graph's nodes as of the last {@link #publish()} (any thread); empty before one. */
    public List<GraphNode> lastDecodeGraph() {
        return published;
    }
}
