package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.process.layout.TypeTable;

import java.util.Arrays;

/**
 * The roofline's cost model, one node at a time: the bytes a node must read and write by its sources' and result's
 * types and shapes, and its FLOPs, by its op's {@link CostRule}; MUL_MAT_ID by the experts the router chose
 * ({@link ExpertRouting}). What a node costs is left in the fields below until the next node; the aggregator sums
 * them per group and op. Single writer: the collector thread.
 */
final class NodeCosts {
    private final OpNaming naming;
    private final ExpertRouting routing;
    private final TensorShapes shapes;
    private CostRule[] rules = new CostRule[0];

    // The node costed last.
    long nodeBytes;
    long nodeWeightBytes;
    long nodeExpertBytes;
    long nodeFlops;
    long nodeTokens;
    long nodeKvBytesPerPosition;
    /** Its experts were not known (the ids not read, or cut short). */
    boolean nodeUnrouted;

    // This graph's routing by ids tensor (the MoE layer's arrays, used during the graph only).
    private long[] boundIds = new long[64];
    private long[][] boundRows = new long[64][];
    private int boundCount;

    NodeCosts(OpNaming naming, TypeTable types, RooflineAggregator.WeightSource source, ExpertRouting routing) {
        this.naming = naming;
        this.routing = routing;
        this.shapes = new TensorShapes(types, source);
    }

    /** A graph starts: its sources resolve against its node list, and its routing is read afresh. */
    void beginGraph(CpuGraph graph) {
        shapes.beginGraph(graph);
        boundCount = 0;
    }

    /** Changes whenever a cached leaf was read again: a memo of costs made before it is stale. */
    long epoch() {
        return shapes.epoch();
    }

    /** A new node list is costed (not the memo of the last one reused). */
    void beginCosting() {
        shapes.beginCosting();
    }

    /** Costs one executed node into the fields above; false when it cannot be costed ({@link #nodeUnrouted} says why). */
    boolean cost(CpuGraph graph, int node, int group) {
        nodeBytes = 0;
        nodeWeightBytes = 0;
        nodeExpertBytes = 0;
        nodeFlops = 0;
        nodeTokens = 0;
        nodeKvBytesPerPosition = 0;
        nodeUnrouted = false;
        long results = graph.ne(node, 0) * graph.ne(node, 1) * graph.ne(node, 2) * graph.ne(node, 3);
        long resultBytes = shapes.bytes(graph.type(node), results);
        if (resultBytes < 0) {
            return false;
        }
        int first = graph.firstNode(group);
        switch (rule(graph.op(node))) {
            case MUL_MAT -> {
                if (!needs(graph, node, 0, 1) || !add(graph, node, 0, first) || !add(graph, node, 1, first)) {
                    return false;
                }
                long k = shapes.ne[0];
                long m = shapes.ne[1];
                long n = graph.ne(node, 1);
                nodeFlops = 2 * k * m * n * graph.ne(node, 2) * graph.ne(node, 3);
                nodeTokens = shapes.weight[0] ? n : 0;
                nodeBytes += resultBytes;
            }
            case MUL_MAT_ID -> {
                if (!needs(graph, node, 0, 2) || !shapes.resolve(graph, node, 0)) {
                    return false;
                }
                long k = shapes.ne[0];
                long m = shapes.ne[1];
                long sliceBytes = shapes.bytes(shapes.type[0], k);
                boolean weight = shapes.weight[0];
                long[] rows = routed(graph, group, graph.src(node, 2));
                long routedRows = 0;
                long chosen = 0;
                for (int e = 0; rows != null && e < rows.length; e++) {
                    routedRows += rows[e];
                    chosen += rows[e] > 0 ? 1 : 0;
                }
                // n_used × tokens rows ran: fewer read means the ids were cut short, and the experts are not known
                if (routedRows < graph.ne(node, 1) * graph.ne(node, 2)) {
                    nodeUnrouted = true;
                    return false;
                }
                if (sliceBytes < 0 || !add(graph, node, 1, first) || !add(graph, node, 2, first)) {
                    return false;
                }
                long experts = chosen * sliceBytes * m;
                nodeBytes += experts + resultBytes;
                nodeWeightBytes += weight ? experts : 0;
                nodeExpertBytes += weight ? experts : 0;
                nodeFlops = 2 * k * m * routedRows;
            }
            case GET_ROWS -> {
                if (!needs(graph, node, 0, 1) || !shapes.resolve(graph, node, 0) || !add(graph, node, 1, first)) {
                    return false;
                }
                long rowBytes = shapes.bytes(shapes.type[0], shapes.ne[0]);
                if (rowBytes < 0) {
                    return false;
                }
                long picked = rowBytes * graph.ne(node, 1) * graph.ne(node, 2) * graph.ne(node, 3);
                nodeBytes += picked + resultBytes;
                nodeWeightBytes += shapes.weight[0] ? picked : 0;
            }
            case SET_ROWS -> {
                // ggml_set_rows(a, b, c): src[0] the rows b, src[1] their indices c, and (since ggml's PR 16063)
                // src[2] the destination a, whose rows are written, not read: only b's rows are touched in it.
                if (!needs(graph, node, 0, 1) || !add(graph, node, 0, first) || !add(graph, node, 1, first)) {
                    return false;
                }
                long written = shapes.bytes(graph.type(node), shapes.elements(0));
                if (written < 0) {
                    return false;
                }
                nodeBytes += written;
            }
            case CPY -> {
                if (!add(graph, node, 0, first)) {
                    return false;
                }
                nodeBytes += resultBytes;
            }
            case FLASH_ATTN -> {
                if (!needs(graph, node, 0, 2) || !addAll(graph, node, first)) {
                    return false;
                }
                long queries = shapes.ne[1] * shapes.ne[2] * shapes.ne[3]; // q: [D_k, n_q, heads, seqs]
                nodeFlops = 2 * queries * shapes.ne[5] * (shapes.ne[0] + shapes.ne[8]);
                nodeBytes += resultBytes;
                // One context position of this layer's cache: k [D_k, n_kv, heads_kv, streams], v likewise.
                long kPosition = shapes.bytes(shapes.type[1], shapes.ne[4] * shapes.ne[6]);
                long vPosition = shapes.bytes(shapes.type[2], shapes.ne[8] * shapes.ne[10]);
                nodeKvBytesPerPosition = kPosition > 0 && vPosition > 0 ? kPosition + vPosition : 0;
            }
            case ARITHMETIC -> {
                if (!addAll(graph, node, first)) {
                    return false;
                }
                nodeFlops = Math.max(results, graph.src(node, 0) != 0 ? shapes.elements(0) : 0);
                nodeBytes += resultBytes;
            }
            case MOVE -> {
                if (!addAll(graph, node, first)) {
                    return false;
                }
                nodeBytes += resultBytes;
            }
        }
        return true;
    }

    /** Whether the node has every source from {@code from} to {@code to}. */
    private static boolean needs(CpuGraph graph, int node, int from, int to) {
        for (int s = from; s <= to; s++) {
            if (graph.src(node, s) == 0) {
                return false;
            }
        }
        return true;
    }

    private boolean addAll(CpuGraph graph, int node, int first) {
        return add(graph, node, 0, first) && add(graph, node, 1, first) && add(graph, node, 2, first);
    }

    /**
     * Adds source {@code s} read whole (none: nothing to add). A source made earlier in the same fused group is
     * the fused kernel's own intermediate, not read back from memory.
     */
    private boolean add(CpuGraph graph, int node, int s, int groupFirst) {
        if (graph.src(node, s) == 0) {
            return true;
        }
        if (!shapes.resolve(graph, node, s)) {
            return false;
        }
        if (shapes.node[s] >= groupFirst && shapes.node[s] < node) {
            return true;
        }
        long bytes = shapes.bytes(s);
        if (bytes < 0) {
            return false;
        }
        nodeBytes += bytes;
        nodeWeightBytes += shapes.weight[s] ? bytes : 0;
        return true;
    }

    /** The rows per expert of ids tensor {@code ids}: read at the first group that uses it, then bound to it. */
    private long[] routed(CpuGraph graph, int group, long ids) {
        for (int i = 0; i < boundCount; i++) {
            if (boundIds[i] == ids) {
                return boundRows[i];
            }
        }
        long[] rows = routing.rowsPerExpert(graph.seq(), group);
        if (rows != null) {
            if (boundCount == boundIds.length) {
                boundIds = Arrays.copyOf(boundIds, boundCount * 2);
                boundRows = Arrays.copyOf(boundRows, boundCount * 2);
            }
            boundIds[boundCount] = ids;
            boundRows[boundCount++] = rows;
        }
        return rows;
    }

    /** Op ids whose rule is kept in a table; a larger one (not a ggml op: the target chose it) is looked up each time. */
    private static final int MAX_OP_ID = 1024;

    CostRule rule(int op) {
        if (op < 0) {
            return CostRule.MOVE;
        }
        if (op >= MAX_OP_ID) {
            // The target chose the op id: no table grows to it (ggml has about a hundred ops).
            return CostRule.of(naming.opName(op, 0));
        }
        if (op >= rules.length) {
            rules = Arrays.copyOf(rules, Math.max(op + 1, rules.length * 2));
        }
        if (rules[op] == null) {
            rules[op] = CostRule.of(naming.opName(op, 0));
        }
        return rules[op];
    }
}
