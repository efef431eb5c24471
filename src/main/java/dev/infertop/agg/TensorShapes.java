package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TypeTable;

import java.util.Arrays;

/**
 * The type and shape of a node's sources, without allocating per node: a source that is a node of the same graph
 * is found in it (an index by address, built once per node list); any other (a model weight, an input, the KV
 * cache) is read from the target's memory once ({@link RooflineAggregator.WeightSource}) and cached by address.
 * Model weights stay cached (a loaded model never moves them); what is not a weight is read again every
 * {@link #REFRESH_GRAPHS} graphs, because llama.cpp rebuilds graphs in the same memory and a leaf may change
 * shape in place; when that read fails (the target exited before the collector drained its last graphs), the
 * shape read last stands. Resolved sources land in three slots (src0..2) that the caller reads.
 */
final class TensorShapes {
    /** Graphs after which cached non-weights are read again. */
    static final int REFRESH_GRAPHS = 32;
    private static final int CACHE_SLOTS = 1 << 14;
    private static final RooflineAggregator.Source UNREADABLE = new RooflineAggregator.Source(null, false);

    private final RooflineAggregator.WeightSource memory;
    private final long[] blockBytes;
    private final long[] blockElements;

    private final long[] cacheKeys = new long[CACHE_SLOTS];
    private final RooflineAggregator.Source[] cacheValues = new RooflineAggregator.Source[CACHE_SLOTS];
    /** Not resolved since the last refresh. */
    private final boolean[] stale = new boolean[CACHE_SLOTS];
    /** The costing (see {@link #beginCosting}) that last resolved each entry. */
    private final long[] costingOf = new long[CACHE_SLOTS];
    private long costing;
    // The leaves one refresh reads: their cache slots and addresses, and what was read.
    private int[] refreshSlots = new int[64];
    private long[] refreshAddresses = new long[64];
    private RooflineAggregator.Source[] refreshed = new RooflineAggregator.Source[64];
    private long graphsSinceRefresh;
    /** Counts the refreshes: a cost computed in an earlier epoch may rest on a leaf's old shape. */
    private long epoch;

    // Node index by tensor address for node list indexedSeq (open addressing; index + 1, 0 = empty).
    private long indexedSeq = -1;
    private long[] indexKeys = new long[4096];
    private int[] indexNodes = new int[4096];

    // The slots: src0..2 of the node last resolved.
    final int[] type = new int[3];
    final long[] ne = new long[12];
    final boolean[] weight = new boolean[3];
    /** The source's node index in the graph, -1 when it is not a node (a leaf read from memory). */
    final int[] node = new int[3];

    TensorShapes(TypeTable types, RooflineAggregator.WeightSource memory) {
        this.memory = memory;
        this.blockBytes = new long[types.count()];
        this.blockElements = new long[types.count()];
        for (int t = 0; t < types.count(); t++) {
            int type = t;
            types.blockSize(t).ifPresent(block -> {
                blockBytes[type] = block.bytes();
                blockElements[type] = block.elements();
            });
        }
    }

    /** A new graph: index its node list if it is a new one; forget non-weights every REFRESH_GRAPHS graphs. */
    void beginGraph(CpuGraph graph) {
        if (++graphsSinceRefresh >= REFRESH_GRAPHS) {
            graphsSinceRefresh = 0;
            if (refreshNonWeights()) {
                epoch++;
            }
        }
        if (graph.nodesReadSeq() != indexedSeq) {
            index(graph);
        }
    }

    /**
     * A graph's nodes are costed afresh from here (not a reused graph's costs kept): the leaves they resolve stay
     * in use while that graph is reused, though nothing resolves them again.
     */
    void beginCosting() {
        costing++;
    }

    /** Counts the refreshes that found a leaf changed (see {@link #beginGraph}): costs from before may rest on it. */
    long epoch() {
        return epoch;
    }

    /** Bytes of {@code elements} values of {@code type} in whole blocks (ggml_row_size); -1 when not known. */
    long bytes(int type, long elements) {
        if (type < 0 || type >= blockBytes.length || blockElements[type] == 0 || elements < 0
                || elements % blockElements[type] != 0) {
            return -1;
        }
        long blocks = elements / blockElements[type];
        return blocks > Long.MAX_VALUE / blockBytes[type] ? -1 : blocks * blockBytes[type];
    }

    long elements(int slot) {
        return ne[slot * 4] * ne[slot * 4 + 1] * ne[slot * 4 + 2] * ne[slot * 4 + 3];
    }

    /** Bytes of the whole source in {@code slot}, -1 when its type's size is not known. */
    long bytes(int slot) {
        return bytes(type[slot], elements(slot));
    }

    /**
     * Resolves source {@code s} of {@code graphNode} into slot {@code s}; false when it cannot be (no source, or
     * a leaf the target's memory no longer holds: it exited before its last graphs were drained).
     */
    boolean resolve(CpuGraph graph, int graphNode, int s) {
        long address = graph.src(graphNode, s);
        if (address == 0) {
            return false;
        }
        int at = nodeAt(address);
        node[s] = at;
        if (at >= 0) {
            type[s] = graph.type(at);
            for (int d = 0; d < 4; d++) {
                ne[s * 4 + d] = graph.ne(at, d);
            }
            weight[s] = false;
            return true;
        }
        RooflineAggregator.Source read = read(address);
        if (read == null) {
            return false;
        }
        TensorHeaders.Header h = read.header();
        type[s] = h.type();
        ne[s * 4] = h.ne0();
        ne[s * 4 + 1] = h.ne1();
        ne[s * 4 + 2] = h.ne2();
        ne[s * 4 + 3] = h.ne3();
        weight[s] = read.weight();
        return true;
    }

    private void index(CpuGraph graph) {
        int count = graph.nodeCount();
        int capacity = Integer.highestOneBit(Math.max(16, count * 2 - 1)) << 1;
        if (indexKeys.length < capacity) {
            indexKeys = new long[capacity];
            indexNodes = new int[capacity];
        } else {
            Arrays.fill(indexNodes, 0);
        }
        int mask = indexKeys.length - 1;
        for (int n = 0; n < count; n++) {
            long address = graph.tensor(n);
            int i = (int) (mix(address) & mask);
            while (indexNodes[i] != 0 && indexKeys[i] != address) {
                i = (i + 1) & mask;
            }
            indexKeys[i] = address;
            indexNodes[i] = n + 1;
        }
        indexedSeq = graph.nodesReadSeq();
    }

    private int nodeAt(long address) {
        int mask = indexKeys.length - 1;
        for (int i = (int) (mix(address) & mask); indexNodes[i] != 0; i = (i + 1) & mask) {
            if (indexKeys[i] == address) {
                return indexNodes[i] - 1;
            }
        }
        return -1;
    }

    private RooflineAggregator.Source read(long address) {
        int slot = (int) (mix(address) & (CACHE_SLOTS - 1));
        for (int probe = 0; probe < 8; probe++) {
            int i = (slot + probe) & (CACHE_SLOTS - 1);
            if (cacheValues[i] == null) {
                RooflineAggregator.Source read = memory.read(address);
                cacheKeys[i] = address;
                stale[i] = false;
                costingOf[i] = costing;
                cacheValues[i] = read == null || read.header() == null ? UNREADABLE : read;
                return cacheValues[i] == UNREADABLE ? null : cacheValues[i];
            }
            if (cacheKeys[i] == address) {
                stale[i] = false;
                costingOf[i] = costing;
                return cacheValues[i] == UNREADABLE ? null : cacheValues[i];
            }
        }
        RooflineAggregator.Source read = memory.read(address); // a crowded neighbourhood: read, do not cache
        return read == null || read.header() == null ? null : read;
    }

    /**
     * Reads again what may have changed in place (inputs, the KV cache) and keeps model weights, which a loaded
     * model never moves or reshapes; true when a leaf read again has another type or shape, so that costs worked
     * out before may rest on its old one. Read here, all at once, not at a leaf's next use: a refresh that changes
     * nothing, as nearly all do, then leaves a reused graph's costs standing instead of having every node costed
     * again (a visible share of infertop's CPU with every graph traced; measurements.md). A read that fails keeps
     * the shape read last (the target exited before the collector drained its last graphs). What could not be
     * read, or is in use no more (not resolved since the last refresh, nor by the graph whose costs are reused: a
     * graph's leaves after its context was freed), is forgotten; an emptied slot inside a probe run only costs a
     * second read.
     */
    private boolean refreshNonWeights() {
        int count = 0;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            RooflineAggregator.Source cached = cacheValues[i];
            if (cached == null) {
                continue;
            }
            boolean inUse = !stale[i] || costingOf[i] == costing;
            if (cached == UNREADABLE || !inUse) {
                cacheValues[i] = null;
                stale[i] = false;
            } else if (!cached.weight()) {
                stale[i] = true;
                if (count == refreshSlots.length) {
                    refreshSlots = Arrays.copyOf(refreshSlots, count * 2);
                    refreshAddresses = Arrays.copyOf(refreshAddresses, count * 2);
                    refreshed = Arrays.copyOf(refreshed, count * 2);
                }
                refreshSlots[count] = i;
                refreshAddresses[count++] = cacheKeys[i];
            }
        }
        memory.readAll(refreshAddresses, count, refreshed); // one syscall for all, not two per leaf
        boolean changed = false;
        for (int k = 0; k < count; k++) {
            RooflineAggregator.Source read = refreshed[k];
            refreshed[k] = null;
            int i = refreshSlots[k];
            if (read != null && read.header() != null && !read.equals(cacheValues[i])) {
                cacheValues[i] = read;
                changed = true;
            }
        }
        return changed;
    }

    private static long mix(long address) {
        long h = address * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 29);
    }
}
