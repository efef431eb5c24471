package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.target.layout.TensorHeaders;
import dev.infertop.target.layout.TypeTable;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The roofline's points, from each attributed CPU graph: for every MUL_MAT node the bytes it must read (its
 * weight in the weight's stored type, quantized blocks included, and F32 activations) and write, and its
 * 2·K·M·N FLOPs, summed per op over the wall time of the node groups they ran in (the ops table's wall time).
 * A decode step of one token also gives the weight bytes one generated token streams.
 *
 * <p>A node's weight (src0) is read from the target's memory once ({@link WeightSource}: type, shape and
 * whether it is a model weight, by its ".weight" name), then cached by address; what is not a weight is read
 * again every {@link #REFRESH_GRAPHS} graphs, because llama.cpp rebuilds graphs in the same memory and a
 * non-weight source (the KV cache's view in attention) changes shape in place. The weight bytes per decode
 * token come from the last decode graph whose every source could be read.
 */
public final class RooflineAggregator implements CpuGraphListener {
    /** Graphs after which cached sources are read again. */
    static final int REFRESH_GRAPHS = 32;
    private static final int CACHE_SLOTS = 1 << 14;
    private static final long ACTIVATION_BYTES = Float.BYTES; // src1 and the result: F32 on the CPU backend

    /** A source tensor as the target holds it: its header, and whether it is a model weight. */
    public record Source(TensorHeaders.Header header, boolean weight) {}

    /** Reads the source tensor at an address (null: unreadable). */
    @FunctionalInterface
    public interface WeightSource {
        Source read(long address);
    }

    private final int mulMat;
    private final TypeTable types;
    private final WeightSource source;
    private final Roofline.Ceilings ceilings;

    private final long[] cacheKeys = new long[CACHE_SLOTS];
    private final Source[] cacheValues = new Source[CACHE_SLOTS];
    private static final Source UNREADABLE = new Source(null, false);
    private long graphsSinceRefresh;

    /** Per op name: {nodes, bytes, weightBytes, flops, wallNs}, over the run. */
    private final Map<String, long[]> run = new LinkedHashMap<>();
    private final Map<String, long[]> atLastTick = new LinkedHashMap<>();
    private long decodeGraphs;
    private long decodeGraphsAtLastTick;
    private long weightBytesPerDecodeToken;

    public RooflineAggregator(int mulMatOp, TypeTable types, WeightSource source, Roofline.Ceilings ceilings) {
        this.mulMat = mulMatOp;
        this.types = types;
        this.source = source;
        this.ceilings = ceilings;
    }

    @Override
    public void onGraph(CpuGraph graph) {
        if (!graph.attributed() || !graph.nodesKnown()) {
            return;
        }
        if (++graphsSinceRefresh >= REFRESH_GRAPHS) {
            graphsSinceRefresh = 0;
            forgetNonWeights();
        }
        String[] opNames = graph.groupOpNames();
        long graphWeightBytes = 0;
        long tokens = -1;
        boolean complete = true;
        for (int group = 0; group < graph.groupCount(); group++) {
            long nodes = 0;
            long bytes = 0;
            long weightBytes = 0;
            long flops = 0;
            for (int node = graph.firstNode(group); node <= graph.lastNode(group); node++) {
                if (graph.op(node) != mulMat) {
                    continue;
                }
                Source weight = source(graph.src(node, 0));
                if (weight == null) {
                    complete = false; // e.g. the target exited before its last graphs were drained
                    continue;
                }
                TensorHeaders.Header w = weight.header();
                long k = w.ne0();
                long m = w.ne1();
                long n = graph.ne(node, 1);
                long results = graph.ne(node, 2) * graph.ne(node, 3);
                OptionalLong rowBytes = types.bytes(w.type(), k);
                if (rowBytes.isEmpty() || n < 1 || results < 1) {
                    continue;
                }
                long read = rowBytes.getAsLong() * m * w.ne2() * w.ne3();
                nodes++;
                bytes += read + ACTIVATION_BYTES * (k * n + m * n) * results;
                flops += 2 * k * m * n * results;
                if (weight.weight()) {
                    weightBytes += read;
                    if (tokens < 0) {
                        tokens = n;
                    }
                }
            }
            if (nodes > 0) {
                long[] op = run.computeIfAbsent(opNames[group], name -> new long[5]);
                op[0] += nodes;
                op[1] += bytes;
                op[2] += weightBytes;
                op[3] += flops;
                op[4] += graph.groupWallNs(group);
                graphWeightBytes += weightBytes;
            }
        }
        if (tokens == 1) {
            decodeGraphs++;
            if (complete) {
                weightBytesPerDecodeToken = graphWeightBytes; // only from a graph whose every source was read
            }
        }
    }

    private Source source(long address) {
        if (address == 0) {
            return null;
        }
        int slot = (int) (mix(address) & (CACHE_SLOTS - 1));
        for (int probe = 0; probe < 8; probe++) {
            int i = (slot + probe) & (CACHE_SLOTS - 1);
            if (cacheValues[i] == null) {
                Source read = source.read(address);
                cacheKeys[i] = address;
                cacheValues[i] = read == null || read.header() == null ? UNREADABLE : read;
                return cacheValues[i] == UNREADABLE ? null : cacheValues[i];
            }
            if (cacheKeys[i] == address) {
                return cacheValues[i] == UNREADABLE ? null : cacheValues[i];
            }
        }
        Source read = source.read(address); // a crowded neighbourhood: read, do not cache
        return read == null || read.header() == null ? null : read;
    }

    /**
     * Drops what may have changed in place (activations, the KV cache's views) and keeps model weights, which a
     * loaded model never moves or reshapes. An emptied slot inside a probe run only costs a second read.
     */
    private void forgetNonWeights() {
        for (int i = 0; i < CACHE_SLOTS; i++) {
            Source cached = cacheValues[i];
            if (cached != null && (cached == UNREADABLE || !cached.weight())) {
                cacheValues[i] = null;
            }
        }
    }

    private static long mix(long address) {
        long h = address * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 29);
    }

    /** The run so far. */
    public RooflineTotals totals() {
        return figures(run, null, decodeGraphs);
    }

    /** Since the last interval, and starts the next one. */
    public RooflineTotals interval() {
        RooflineTotals interval = figures(run, atLastTick, decodeGraphs - decodeGraphsAtLastTick);
        for (Map.Entry<String, long[]> op : run.entrySet()) {
            atLastTick.put(op.getKey(), op.getValue().clone());
        }
        decodeGraphsAtLastTick = decodeGraphs;
        return interval;
    }

    private RooflineTotals figures(Map<String, long[]> now, Map<String, long[]> before, long decodes) {
        List<RooflineTotals.OpRoofline> ops = new ArrayList<>();
        for (Map.Entry<String, long[]> op : now.entrySet()) {
            long[] v = op.getValue();
            long[] b = before == null ? null : before.get(op.getKey());
            long nodes = v[0] - (b == null ? 0 : b[0]);
            if (nodes > 0) {
                ops.add(new RooflineTotals.OpRoofline(op.getKey(), nodes, v[1] - (b == null ? 0 : b[1]),
                        v[2] - (b == null ? 0 : b[2]), v[3] - (b == null ? 0 : b[3]), v[4] - (b == null ? 0 : b[4])));
            }
        }
        return new RooflineTotals(ops, decodes, weightBytesPerDecodeToken, ceilings);
    }
}
