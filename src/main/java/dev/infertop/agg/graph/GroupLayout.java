package dev.infertop.agg.graph;

import dev.infertop.model.Other;
import java.util.Arrays;
import java.util.List;

/**
 * The node groups of one node list, as the loop runs them, with each group's op name ("RMS_NORM+MUL" for a
 * fused one). Worked out once per node list read and fusion (and reused for every graph that reuses the list,
 * and for a re-read list identical to the one it came from), so that listeners can key what they derive per
 * group (stats, labels, FLOPs) on the layout's identity instead of redoing it per graph.
 */
final class GroupLayout {
    /** graph_seq of the node list it was last found to fit (checked field by field only when that changes). */
    long nodesReadSeq;
    final long fusedSignature;
    final boolean everyNode;
    final int[] firstNode;
    final int[] lastNode;
    final String[] opNames;
    /** Groups whose op name was past the cap of {@link OpNames}: named "other". */
    final int foldedGroups;
    // Copies of the node fields it was worked out from (see sameNodes).
    private final long[] tensors;
    private final long[] sources;
    private final long[] shapes;
    private final int[] ops;
    private final int[] opParams;
    private final int[] flags;
    private final int[] types;
    private final int[] nameIds;

    GroupLayout(CpuGraph graph, long fusedSignature, boolean everyNode, List<int[]> groups, NodeNaming naming,
                OpNames names) {
        this.nodesReadSeq = graph.nodesReadSeq;
        this.fusedSignature = fusedSignature;
        this.everyNode = everyNode;
        int n = groups.size();
        firstNode = new int[n];
        lastNode = new int[n];
        opNames = new String[n];
        int folded = 0;
        for (int k = 0; k < n; k++) {
            firstNode[k] = groups.get(k)[0];
            lastNode[k] = groups.get(k)[1];
            opNames[k] = names.intern(name(graph, naming, firstNode[k], lastNode[k]));
            if (opNames[k] == null) {
                opNames[k] = Other.NAME;
                folded++;
            }
        }
        foldedGroups = folded;
        int count = graph.nodeCount();
        tensors = Arrays.copyOf(graph.tensors, count);
        sources = Arrays.copyOf(graph.sources, count * 3);
        shapes = Arrays.copyOf(graph.shapes, count * 4);
        ops = Arrays.copyOf(graph.ops, count);
        opParams = Arrays.copyOf(graph.opParams, count);
        flags = Arrays.copyOf(graph.flags, count);
        types = Arrays.copyOf(graph.types, count);
        nameIds = Arrays.copyOf(graph.nameIds, count);
    }

    int size() {
        return firstNode.length;
    }

    /** A fused group by its ops' names joined with '+', empty nodes left out. */
    private static String name(CpuGraph graph, NodeNaming naming, int first, int last) {
        if (first == last) {
            return naming.opName(graph.ops[first], graph.opParams[first]);
        }
        StringBuilder name = new StringBuilder();
        for (int i = first; i <= last; i++) {
            if (naming.isEmpty(graph.ops[i])) {
                continue;
            }
            if (!name.isEmpty()) {
                name.append('+');
            }
            name.append(naming.opName(graph.ops[i], graph.opParams[i]));
        }
        return name.toString();
    }

    /**
     * Whether the graph's node list is the one this layout was worked out from, field for field: the probes
     * re-read a reused graph every few dozen tokens, and naming its ~300 groups again would give the same.
     */
    boolean sameNodes(CpuGraph graph) {
        int count = graph.nodeCount();
        return count == tensors.length
                && Arrays.equals(tensors, 0, count, graph.tensors, 0, count)
                && Arrays.equals(ops, 0, count, graph.ops, 0, count)
                && Arrays.equals(flags, 0, count, graph.flags, 0, count)
                && Arrays.equals(nameIds, 0, count, graph.nameIds, 0, count)
                && Arrays.equals(shapes, 0, count * 4, graph.shapes, 0, count * 4)
                && Arrays.equals(opParams, 0, count, graph.opParams, 0, count)
                && Arrays.equals(types, 0, count, graph.types, 0, count)
                && Arrays.equals(sources, 0, count * 3, graph.sources, 0, count * 3);
    }
}
