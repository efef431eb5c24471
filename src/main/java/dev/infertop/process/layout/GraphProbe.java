package dev.infertop.process.layout;

import dev.infertop.process.layout.StructScan.Sample;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Calibrates struct ggml_cgraph (private to ggml: ggml-impl.h) and GGML_TENSOR_FLAG_COMPUTE: builds two graphs
 * that are chains of k = 3 and k = 5 ADD nodes over 2 and 3 leaves, with sizes 37 and 41, and finds the int32
 * holding k, the leaf count and the size, and the pointer whose array holds the k nodes in order.
 */
final class GraphProbe {
    /** struct ggml_cgraph is under 128 bytes in every release; its arrays follow it in the context. */
    static final int WINDOW_BYTES = 128;

    record Result(GraphLayout layout, int computeFlag) {}

    private record Chain(MemorySegment graph, List<MemorySegment> leaves, List<MemorySegment> nodes, int size) {}

    private final GgmlLibrary ggml;
    private final Path library;
    private final TensorLayout tensor;

    private GraphProbe(GgmlLibrary ggml, TensorLayout tensor) {
        this.ggml = ggml;
        this.library = ggml.path();
        this.tensor = tensor;
    }

    static Result calibrate(GgmlLibrary ggml, TensorLayout tensor, int f32) throws CalibrationException {
        return new GraphProbe(ggml, tensor).run(f32);
    }

    private Result run(int f32) throws CalibrationException {
        try (ProbeContext probe = ProbeContext.open(ggml, false)) {
            List<Integer> computeBits = new ArrayList<>();
            Chain three = chain(probe, f32, 3, 2, 37, computeBits);
            Chain five = chain(probe, f32, 5, 3, 41, computeBits);
            MemorySegment g3 = probe.view(three.graph(), WINDOW_BYTES);
            MemorySegment g5 = probe.view(five.graph(), WINDOW_BYTES);

            StructScan scan = new StructScan(library, "ggml_cgraph", WINDOW_BYTES);
            int nodeCount = scan.unique("n_nodes", List.of(Sample.int32(g3, 3), Sample.int32(g5, 5)));
            int leafCount = scan.unique("n_leafs", List.of(Sample.int32(g3, 2), Sample.int32(g5, 3)));
            int size = ggml.hasCustomGraphSize()
                    ? scan.unique("size", List.of(Sample.int32(g3, 37), Sample.int32(g5, 41)))
                    : GraphLayout.UNKNOWN;
            int nodes = scan.uniqueOf("nodes", nodesCandidates(probe, List.of(three, five)));
            checkAgainstGraphApi(three);
            checkAgainstGraphApi(five);
            return new Result(new GraphLayout(size, nodeCount, leafCount, nodes), agreedComputeFlag(computeBits));
        }
    }

    /**
     * leaves[0] + leaves[1] + leaves[2] + … as a chain of ADDs, expanded into a new graph. Records, per tensor,
     * the flag bits ggml_build_forward_expand set: for nodes into {@code computeBits}; a leaf that gains any
     * bit means those bits are not "compute", so -1 is recorded.
     */
    private Chain chain(ProbeContext probe, int f32, int k, int leafCount, int size, List<Integer> computeBits)
            throws CalibrationException {
        MemorySegment ctx = probe.context();
        List<MemorySegment> leaves = new ArrayList<>();
        for (int i = 0; i < leafCount; i++) {
            leaves.add(ggml.newTensor1d(ctx, f32, 8));
        }
        List<MemorySegment> nodes = new ArrayList<>();
        MemorySegment last = leaves.getFirst();
        for (int i = 0; i < k; i++) {
            last = ggml.add(ctx, last, leaves.get(1 + i % (leafCount - 1)));
            nodes.add(last);
        }
        MemorySegment graph = ggml.newGraph(ctx, size);
        int[] nodeFlagsBefore = flags(probe, nodes);
        int[] leafFlagsBefore = flags(probe, leaves);
        ggml.buildForwardExpand(graph, last);
        int[] nodeFlagsAfter = flags(probe, nodes);
        int[] leafFlagsAfter = flags(probe, leaves);
        for (int i = 0; i < nodes.size(); i++) {
            computeBits.add(nodeFlagsAfter[i] & ~nodeFlagsBefore[i]);
        }
        for (int i = 0; i < leaves.size(); i++) {
            if (leafFlagsAfter[i] != leafFlagsBefore[i]) {
                computeBits.add(-1);
            }
        }
        return new Chain(graph, leaves, nodes, size);
    }

    private int[] flags(ProbeContext probe, List<MemorySegment> tensors) throws CalibrationException {
        int[] flags = new int[tensors.size()];
        for (int i = 0; i < flags.length; i++) {
            flags[i] = StructScan.int32At(probe.view(tensors.get(i), tensor.sizeBytes()), tensor.flagsOffset());
        }
        return flags;
    }

    /** Offsets of a pointer, in both graphs, to an array (inside the context) that starts with the nodes in order. */
    private List<Integer> nodesCandidates(ProbeContext probe, List<Chain> chains) throws CalibrationException {
        List<Integer> offsets = new ArrayList<>();
        for (int offset = 0; offset < WINDOW_BYTES; offset += 8) {
            boolean all = true;
            for (Chain chain : chains) {
                all &= holdsNodes(probe, chain, offset);
            }
            if (all) {
                offsets.add(offset);
            }
        }
        return offsets;
    }

    private boolean holdsNodes(ProbeContext probe, Chain chain, int offset) throws CalibrationException {
        long array = StructScan.int64At(probe.view(chain.graph(), WINDOW_BYTES), offset);
        if (!probe.contains(array) || !probe.contains(array + 8L * chain.nodes().size() - 1)) {
            return false;
        }
        MemorySegment nodes = probe.view(MemorySegment.ofAddress(array), 8L * chain.nodes().size());
        for (int i = 0; i < chain.nodes().size(); i++) {
            if (StructScan.int64At(nodes, 8L * i) != chain.nodes().get(i).address()) {
                return false;
            }
        }
        return true;
    }

    /** ggml_graph_n_nodes and ggml_graph_node, where present, must agree with what the scan found. */
    private void checkAgainstGraphApi(Chain chain) throws CalibrationException {
        var count = ggml.graphNodeCount(chain.graph());
        if (count.isPresent() && count.get() != chain.nodes().size()) {
            throw CalibrationException.of(library, "ggml_graph_n_nodes says " + count.get() + " nodes, expected "
                    + chain.nodes().size());
        }
        for (int i = 0; i < chain.nodes().size(); i++) {
            var node = ggml.graphNode(chain.graph(), i);
            if (node.isPresent() && node.get().address() != chain.nodes().get(i).address()) {
                throw CalibrationException.of(library, "ggml_graph_node(" + i + ") is not the chain's node " + i);
            }
        }
    }

    /** The one bit every node gained and no leaf did; 0 when build_forward_expand sets none (older releases). */
    private int agreedComputeFlag(List<Integer> bits) {
        int first = bits.getFirst();
        boolean agreed = bits.stream().allMatch(b -> b == first) && Integer.bitCount(first) == 1;
        return agreed ? first : 0;
    }
}
