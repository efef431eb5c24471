package dev.infertop.process.layout;

/**
 * Byte offsets in struct ggml_cgraph (ggml/src/ggml-impl.h, not a public header) that BPF programs read.
 *
 * @param sizeOffset  {@code int size}, or {@link #UNKNOWN} for releases without ggml_new_graph_custom (the only
 *                    way to give a graph a size we choose, and so to recognise it)
 * @param nodesOffset {@code struct ggml_tensor **nodes}: the node pointers in execution order
 */
public record GraphLayout(int sizeOffset, int nodeCountOffset, int leafCountOffset, int nodesOffset) {
    public static final int UNKNOWN = -1;
}
