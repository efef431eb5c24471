package dev.infertop.export;

import dev.infertop.model.GraphNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The repeated transformer blocks of an {@link OperatorDag}, found by name, so that a picture can draw each
 * kind of block once instead of once per layer.
 *
 * <p>llama.cpp's graph builder names a block's tensors {@code <what>-<layer>} ({@code attn_norm-3}, ggml adds
 * {@code Qcur-3 (view)}), so nodes group by that number. Nodes before the first numbered node are the
 * prologue, those after the last the epilogue; an unnumbered node in between (ggml's {@code node_17}, a KV-cache
 * view {@code cache_k_l3 (view)}) belongs to the layer of the numbered node before it, since the builder made
 * it there. Layers whose signature, (op, name with every digit run blurred) in node order, is the same form
 * one block kind: blurring all digits, not only the layer suffix, keeps {@code node_17} and {@code cache_k_l3}
 * from splitting layers that are built alike.
 *
 * <p>Folding is only worth it when some kind has two layers or more; otherwise {@link #folded()} is false and
 * {@link #whyNotFolded()} says why.
 */
final class DagFolding {
    /** "-3" at the end of a name or before ggml's " (view)"-style suffix; six digits bound hostile numbers. */
    private static final Pattern LAYER_SUFFIX = Pattern.compile("-(\\d{1,6})(?=$| \\()");
    private static final Pattern DIGITS = Pattern.compile("\\d+");

    /** A layer: its number, its block kind's label, its nodes in graph order and their measured times. */
    record Layer(int number, String kind, List<Integer> nodes, long totalNs, long criticalNs) {}

    /**
     * Layers built alike; {@code nodes[l][p]} is the DAG position of node p in the kind's l-th layer (layers in
     * number order), so {@code nodes[0]} is the representative drawn in detail.
     */
    record Kind(String label, List<Integer> layerNumbers, int[][] nodes) {
        int[] representative() {
            return nodes[0];
        }
    }

    /** One node of a kind, across the kind's layers. */
    record NodeStats(long medianNs, long minNs, long maxNs, int criticalLayers, int layers) {}

    private final OperatorDag dag;
    private final List<Integer> prologue = new ArrayList<>();
    private final List<Integer> epilogue = new ArrayList<>();
    private final List<Layer> layers = new ArrayList<>();
    private final List<Kind> kinds = new ArrayList<>();

    private DagFolding(OperatorDag dag) {
        this.dag = dag;
        List<GraphNode> nodes = dag.nodes();
        int[] number = new int[nodes.size()];
        int first = -1;
        int last = -1;
        for (int i = 0; i < nodes.size(); i++) {
            number[i] = layerNumber(nodes.get(i).name());
            if (number[i] >= 0) {
                first = first < 0 ? i : first;
                last = i;
            }
        }
        TreeMap<Integer, List<Integer>> byNumber = new TreeMap<>();
        int current = -1;
        for (int i = 0; i < nodes.size(); i++) {
            current = number[i] >= 0 ? number[i] : current;
            if (first < 0 || i < first) {
                prologue.add(i);
            } else if (i > last) {
                epilogue.add(i);
            } else {
                byNumber.computeIfAbsent(current, k -> new ArrayList<>()).add(i);
            }
        }
        Map<List<String>, List<Integer>> layersBySignature = new LinkedHashMap<>();
        for (Map.Entry<Integer, List<Integer>> layer : byNumber.entrySet()) {
            layersBySignature.computeIfAbsent(signature(layer.getValue()), k -> new ArrayList<>()).add(layer.getKey());
        }
        Map<Integer, String> kindOf = new LinkedHashMap<>();
        for (List<Integer> numbers : layersBySignature.values()) {
            int[][] kindNodes = new int[numbers.size()][];
            for (int l = 0; l < numbers.size(); l++) {
                kindNodes[l] = byNumber.get(numbers.get(l)).stream().mapToInt(Integer::intValue).toArray();
            }
            String label = label(kinds.size());
            kinds.add(new Kind(label, List.copyOf(numbers), kindNodes));
            numbers.forEach(n -> kindOf.put(n, label));
        }
        for (Map.Entry<Integer, List<Integer>> layer : byNumber.entrySet()) {
            long totalNs = 0;
            long criticalNs = 0;
            for (int i : layer.getValue()) {
                long ns = Math.max(0, nodes.get(i).timeNs());
                totalNs += ns;
                criticalNs += dag.onCriticalPath(i) ? ns : 0;
            }
            layers.add(new Layer(layer.getKey(), kindOf.get(layer.getKey()), List.copyOf(layer.getValue()), totalNs,
                    criticalNs));
        }
    }

    static DagFolding of(OperatorDag dag) {
        return new DagFolding(dag);
    }

    /** The layer number a name carries ({@code Qcur-3 (view)} → 3), or -1. */
    static int layerNumber(String name) {
        Matcher m = LAYER_SUFFIX.matcher(name);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /**
     * A name of layer {@code layer} as the representative of all its kind's layers: that number, where a name
     * carries a layer ({@code Qcur-3}, {@code blk.3.attn_q.weight}, {@code cache_k_l3}), becomes N.
     */
    static String generic(String name, int layer) {
        return name.replaceAll("(?<=[-.]|_l)" + layer + "(?=$|[. )])", "N");
    }

    /** "A" to "Z", then "K27", "K28", ...: short enough for the strip's kind column. */
    static String label(int kind) {
        return kind < 26 ? String.valueOf((char) ('A' + kind)) : "K" + (kind + 1);
    }

    private List<String> signature(List<Integer> layerNodes) {
        List<String> signature = new ArrayList<>(layerNodes.size());
        for (int i : layerNodes) {
            GraphNode node = dag.nodes().get(i);
            signature.add(node.op() + " " + DIGITS.matcher(node.name()).replaceAll("#"));
        }
        return signature;
    }

    /** Whether some block kind stands for two layers or more. */
    boolean folded() {
        return whyNotFolded().isEmpty();
    }

    /** "" when {@link #folded()}, else the reason for the header. */
    String whyNotFolded() {
        if (layers.isEmpty()) {
            return "no node name carries a layer number (like attn_norm-3)";
        }
        if (layers.size() < 2) {
            return "only one numbered layer";
        }
        return kinds.size() == layers.size() ? "no two layers are built alike" : "";
    }

    List<Integer> prologue() {
        return prologue;
    }

    List<Integer> epilogue() {
        return epilogue;
    }

    /** Layers in number order. */
    List<Layer> layers() {
        return layers;
    }

    /** Block kinds in order of their first layer. */
    List<Kind> kinds() {
        return kinds;
    }

    /** Node {@code position} of {@code kind} across its layers: times (median rounds down) and critical count. */
    NodeStats stats(Kind kind, int position) {
        long[] ns = new long[kind.nodes().length];
        int critical = 0;
        for (int l = 0; l < ns.length; l++) {
            int node = kind.nodes()[l][position];
            ns[l] = Math.max(0, dag.nodes().get(node).timeNs());
            critical += dag.onCriticalPath(node) ? 1 : 0;
        }
        Arrays.sort(ns);
        int middle = ns.length / 2;
        long median = ns.length % 2 == 1 ? ns[middle] : ns[middle - 1] + (ns[middle] - ns[middle - 1]) / 2;
        return new NodeStats(median, ns[0], ns[ns.length - 1], critical, ns.length);
    }
}
