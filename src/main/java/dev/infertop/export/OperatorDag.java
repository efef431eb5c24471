package dev.infertop.export;

import dev.infertop.model.GraphNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The operator DAG of one traced graph, rebuilt from the source-tensor addresses each node carries: an edge
 * runs from a source to the node that reads it. Sources that are not nodes of the graph (weights, inputs,
 * the KV cache) are leaves. Each node weighs its measured wall time; the critical path is the path of
 * greatest total time, the chain that bounds the graph's time however many threads run it.
 *
 * <p>Only a node's first three sources are read (native/events.h). In llama-style attention the others
 * (FLASH_ATTN_EXT's mask and sinks) are graph inputs, so no edge between nodes is missed; ops of recurrent
 * models (SSM_SCAN, RWKV_WKV, ...) that read node outputs as src[3+] lose those edges.
 *
 * <p>Use: {@link #ofGraph(List)} for the last decode graph of a session (none: empty), or {@link #of(List)} for
 * given nodes; then {@link DagDotWriter#write(OperatorDag, java.nio.file.Path)}.
 */
public final class OperatorDag {
    private final List<GraphNode> nodes;
    private final List<Long> leaves;
    private final List<String> leafNames;
    private final int[][] nodeSources;
    private final int[][] leafSources;
    private final long[] pathNs;
    private final List<Integer> criticalPath;
    private final boolean[] critical;

    private OperatorDag(List<GraphNode> nodes) {
        this.nodes = List.copyOf(nodes);
        int n = this.nodes.size();
        Map<Long, Integer> positionOf = new HashMap<>();
        for (int i = 0; i < n; i++) {
            positionOf.putIfAbsent(this.nodes.get(i).tensor(), i);
        }
        Map<Long, Integer> leafOf = new LinkedHashMap<>();
        Map<Long, String> nameOfLeaf = new HashMap<>();
        nodeSources = new int[n][];
        leafSources = new int[n][];
        for (int i = 0; i < n; i++) {
            List<Integer> fromNodes = new ArrayList<>();
            List<Integer> fromLeaves = new ArrayList<>();
            List<Long> sources = this.nodes.get(i).sources();
            for (int s = 0; s < sources.size(); s++) {
                long source = sources.get(s);
                if (source == 0) {
                    continue;
                }
                String sourceName = this.nodes.get(i).sourceName(s);
                if (!sourceName.isEmpty()) {
                    nameOfLeaf.putIfAbsent(source, sourceName);
                }
                Integer position = positionOf.get(source);
                if (position != null && position != i) {
                    if (!fromNodes.contains(position)) {
                        fromNodes.add(position);
                    }
                } else if (position == null) {
                    int leaf = leafOf.computeIfAbsent(source, address -> leafOf.size());
                    if (!fromLeaves.contains(leaf)) {
                        fromLeaves.add(leaf);
                    }
                }
            }
            nodeSources[i] = fromNodes.stream().mapToInt(Integer::intValue).toArray();
            leafSources[i] = fromLeaves.stream().mapToInt(Integer::intValue).toArray();
        }
        leaves = List.copyOf(leafOf.keySet());
        leafNames = leaves.stream().map(leaf -> nameOfLeaf.getOrDefault(leaf, "")).toList();
        pathNs = new long[n];
        int[] previous = new int[n];
        Arrays.fill(pathNs, -1);
        boolean[] visiting = new boolean[n];
        for (int i = 0; i < n; i++) {
            longestPathTo(i, previous, visiting);
        }
        critical = new boolean[n];
        List<Integer> path = new ArrayList<>();
        int end = -1;
        for (int i = 0; i < n; i++) {
            if (end < 0 || pathNs[i] > pathNs[end]) {
                end = i; // the first of equal ends: deterministic
            }
        }
        for (int at = end; at >= 0; at = previous[at]) {
            path.add(at);
            critical[at] = true;
        }
        Collections.reverse(path);
        criticalPath = List.copyOf(path);
    }

    /**
     * Longest time of a path ending at node {@code i}, its own time included. ggml keeps nodes in topological
     * order, so sources come first; the recursion only guards against an order that is not.
     */
    private long longestPathTo(int i, int[] previous, boolean[] visiting) {
        if (pathNs[i] >= 0) {
            return pathNs[i];
        }
        visiting[i] = true;
        long best = 0;
        int from = -1;
        for (int source : nodeSources[i]) {
            if (visiting[source]) {
                continue; // a cycle cannot come from ggml; ignore the edge rather than loop
            }
            long length = longestPathTo(source, previous, visiting);
            if (from < 0 || length > best) {
                best = length;
                from = source;
            }
        }
        visiting[i] = false;
        previous[i] = from;
        pathNs[i] = best + Math.max(0, nodes.get(i).timeNs());
        return pathNs[i];
    }

    /** The DAG of the given nodes, in graph order. */
    public static OperatorDag of(List<GraphNode> nodes) {
        return new OperatorDag(nodes);
    }

    /**
     * The DAG of a traced graph, such as the last decode graph (a llama_decode of one token) the DAG recorder saw
     * attributed; empty when there are no nodes (none traced yet: operator layer off, no decode step so far).
     */
    public static Optional<OperatorDag> ofGraph(List<GraphNode> nodes) {
        return nodes.isEmpty() ? Optional.empty() : Optional.of(of(nodes));
    }

    /** Nodes in graph order; a node's position in this list is its id here. */
    public List<GraphNode> nodes() {
        return nodes;
    }

    /** Addresses of the sources outside the graph, in order of first use; a leaf's position is its id. */
    public List<Long> leaves() {
        return leaves;
    }

    /** Names of the leaves, by id, as read from the target ("" when not read). */
    public List<String> leafNames() {
        return leafNames;
    }

    /** Positions of the nodes node {@code position} reads. */
    public int[] nodeSources(int position) {
        return nodeSources[position].clone();
    }

    /** Ids of the leaves node {@code position} reads. */
    public int[] leafSources(int position) {
        return leafSources[position].clone();
    }

    /** Node positions of the critical path, first to last. */
    public List<Integer> criticalPath() {
        return criticalPath;
    }

    public boolean onCriticalPath(int position) {
        return critical[position];
    }

    /** Total measured time along the critical path. */
    public long criticalPathNs() {
        return criticalPath.isEmpty() ? 0 : pathNs[criticalPath.get(criticalPath.size() - 1)];
    }

    /** Measured time of every node together. */
    public long totalNs() {
        return nodes.stream().mapToLong(GraphNode::timeNs).sum();
    }

    /** Whether edge source → node is on the critical path. */
    public boolean criticalEdge(int sourcePosition, int position) {
        int at = criticalPath.indexOf(position);
        return at > 0 && criticalPath.get(at - 1) == sourcePosition;
    }
}
