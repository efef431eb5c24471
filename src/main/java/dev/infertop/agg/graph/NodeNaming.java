package dev.infertop.agg.graph;

/** What the CPU graph needs to know about the target's ggml: op names and which nodes the loop runs. */
public interface NodeNaming {
    /** The op's name from the target's own ggml_op_name(), e.g. MUL_MAT; UNARY/GLU carry their sub-op. */
    String opName(int op, int opParam0);

    /** Ops the CPU node loop skips without computing (NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE). */
    boolean isEmpty(int op);

    /** The GGML_TENSOR_FLAG_COMPUTE bit, or 0 in releases without it (then every non-empty node runs). */
    int computeFlag();
}
