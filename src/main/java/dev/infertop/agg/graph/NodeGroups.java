package dev.infertop.agg.graph;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The node groups a CPU graph's node loop runs, in order, as the barrier arrivals count them: executed nodes
 * (not empty, COMPUTE flag set where the release has it), merged where a fused op covered several. The same
 * rule for the operator layer's attribution and the MoE layer's read plans, so the two always agree.
 */
final class NodeGroups {
    private NodeGroups() {}

    /** @param fused {group, first tensor, next tensor} as one thread reported them */
    static List<int[]> groups(int nodeCount, long[] tensors, int[] ops, int[] flags, NodeNaming naming,
                              List<long[]> fused) {
        Map<Long, Integer> indexOf = new HashMap<>();
        if (!fused.isEmpty()) {
            for (int i = 0; i < nodeCount; i++) {
                indexOf.put(tensors[i], i);
            }
        }
        Map<Integer, Integer> fusedEnd = new HashMap<>();
        for (long[] f : fused) {
            Integer first = indexOf.get(f[1]);
            Integer next = indexOf.get(f[2]);
            if (first != null && next != null && next > first) {
                fusedEnd.put(first, next);
            }
        }
        List<int[]> groups = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            if (!executes(naming, ops[i], flags[i])) {
                continue;
            }
            Integer end = fusedEnd.get(i);
            if (end != null) {
                groups.add(new int[] {i, end});
                i = end;
            } else {
                groups.add(new int[] {i, i});
            }
        }
        return groups;
    }

    /** Whether the CPU loop runs a node: not an empty op, and the COMPUTE flag set where the release has it. */
    static boolean executes(NodeNaming naming, int op, int flags) {
        int computeFlag = naming.computeFlag();
        return !naming.isEmpty(op) && (computeFlag == 0 || (flags & computeFlag) != 0);
    }

    /** Loops of older releases (before the COMPUTE flag) run every node, empty or not, each its own group. */
    static List<int[]> everyNode(int nodeCount) {
        List<int[]> groups = new ArrayList<>(nodeCount);
        for (int i = 0; i < nodeCount; i++) {
            groups.add(new int[] {i, i});
        }
        return groups;
    }
}
