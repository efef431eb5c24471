package dev.infertop.process.layout;

import java.util.List;

/**
 * Everything infertop needs to know about one libggml-base build to read its tensors and graphs from BPF.
 *
 * @param library      the path calibrated (informational: a copy with the same build-id has the same layout)
 * @param buildId      GNU build-id of the library, or null when it has none
 * @param outputFlag   the bit ggml_set_output (or ggml_set_input, where set_output is missing) sets in flags
 * @param computeFlag  GGML_TENSOR_FLAG_COMPUTE: the bit ggml_build_forward_expand sets on graph nodes;
 *                     0 in releases that compute every node and have no such flag
 * @param emptyOps     op numbers whose nodes the CPU backend skips (NONE, RESHAPE, VIEW, PERMUTE,
 *                     TRANSPOSE), by name from this release's op table
 */
public record CalibratedLayout(
        String library,
        String buildId,
        TensorLayout tensor,
        GraphLayout graph,
        OpTable ops,
        TypeTable types,
        int outputFlag,
        int computeFlag,
        List<Integer> emptyOps) {

    public CalibratedLayout {
        emptyOps = List.copyOf(emptyOps);
    }

    public static final List<String> EMPTY_OP_NAMES = List.of("NONE", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE");

    public boolean hasComputeFlag() {
        return computeFlag != 0;
    }
}
