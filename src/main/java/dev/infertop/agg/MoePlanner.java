package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The MoE layer's plans: from a CPU graph's node list, which node groups copy an expert-ids tensor and which
 * groups time each MoE layer. A pure function of the graph (and the op and tensor names), kept apart from the
 * aggregator that counts what the plans read.
 */
final class MoePlanner {
    /**
     * What BPF copies for graphs of one signature, and which groups time each MoE layer.
     *
     * @param copyGroups   arrival index (node group as the loop runs them, fused ops as one) of each copy
     * @param bpfGroups    the copy's MUL_MAT_ID numbered as BPF keys it: executed nodes before it, fused or not
     */
    record Plan(int[] copyGroups, int[] bpfGroups, long[] idsTensors, int[] layers,
                        Map<Integer, int[]> groupsByLayer) {
        boolean hasMoe() {
            return copyGroups.length > 0;
        }
    }

    private final OpNaming naming;
    private final NameTable names;

    MoePlanner(OpNaming naming, NameTable names) {
        this.naming = naming;
        this.names = names;
    }

    /**
     * The plan of the graph's node list: the node groups the CPU loop ran (as the CPU graph found them, its
     * arrivals fitting them); then each MUL_MAT_ID whose ids tensor is not the one planned last. Null when the
     * arrivals fit no grouping.
     *
     * <p>The rule is native/moe.bpf.h's (moe_on_node), which plans the same graphs in the kernel where the
     * release has the COMPUTE flag; MoePlannerAgreementTest runs both on the same graphs. BPF numbers a node
     * by the executed nodes before it, and a thread's arrival index plus its fused calls so far reaches that
     * number at the barrier after the node's group when the node ends its group.
     */
    Plan plan(CpuGraph graph) {
        if (!graph.attributed()) {
            return null;
        }
        boolean everyNode = graph.everyNode();
        List<Integer> copyGroups = new ArrayList<>();
        List<Integer> bpfGroups = new ArrayList<>();
        List<Long> idsTensors = new ArrayList<>();
        List<Integer> layersOfCopy = new ArrayList<>();
        Map<Integer, List<Integer>> groupsByLayer = new HashMap<>();
        long lastIds = 0; // BPF's walk keeps only the ids tensor planned last, not a set
        for (int k = 0; k < graph.groupCount(); k++) {
            for (int i = graph.firstNode(k); i <= graph.lastNode(k); i++) {
                long src2 = graph.src(i, 2);
                if (!isMulMatId(graph.op(i)) || src2 == 0 || !graph.executes(naming, i)) {
                    continue;
                }
                if (src2 != lastIds) {
                    int bpfGroup = everyNode ? k : executedBefore(graph, i);
                    if (bpfGroup >= EventLayout.MOE_PLAN_GROUPS) {
                        continue; // beyond what BPF numbers: its rows show up as unread
                    }
                    int layer = layerOf(names.name(graph.nameId(i)));
                    lastIds = src2;
                    idsTensors.add(src2);
                    copyGroups.add(k);
                    bpfGroups.add(bpfGroup);
                    layersOfCopy.add(layer < 0 ? idsTensors.size() - 1 : layer);
                }
                int planLayer = layersOfCopy.get(layersOfCopy.size() - 1);
                groupsByLayer.computeIfAbsent(planLayer, l -> new ArrayList<>()).add(k);
                break;
            }
        }
        Map<Integer, int[]> byLayer = new HashMap<>();
        groupsByLayer.forEach((layer, list) -> byLayer.put(layer, list.stream().mapToInt(Integer::intValue).toArray()));
        return new Plan(copyGroups.stream().mapToInt(Integer::intValue).toArray(),
                bpfGroups.stream().mapToInt(Integer::intValue).toArray(),
                idsTensors.stream().mapToLong(Long::longValue).toArray(),
                layersOfCopy.stream().mapToInt(Integer::intValue).toArray(), byLayer);
    }

    /** Executed nodes (not empty, COMPUTE flag where the release has it) before node {@code index}. */
    private int executedBefore(CpuGraph graph, int index) {
        int executed = 0;
        for (int i = 0; i < index; i++) {
            if (graph.executes(naming, i)) {
                executed++;
            }
        }
        return executed;
    }

    boolean isMulMatId(int op) {
        return op >= 0 && "MUL_MAT_ID".equals(naming.opName(op, 0));
    }

    /**
     * The model layer of a tensor named "ffn_moe_gate-12" (llama.cpp's "name-il"); -1 when not so named. The
     * same digits as native/moe.bpf.h's moe_layer_of: ASCII only, read while the value so far is below 100 000.
     */
    static int layerOf(String name) {
        int layer = -1;
        int value = 0;
        boolean digits = false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '-') {
                value = 0;
                digits = true;
                layer = -1;
            } else if (digits && c >= '0' && c <= '9' && value < 100_000) {
                value = value * 10 + (c - '0');
                layer = value;
            } else {
                digits = false;
                layer = -1;
            }
        }
        return layer;
    }
}
