package dev.infertop.agg;

/** What the operator layer needs to know about the target's ggml: op names and which nodes run. */
public interface OpNaming {
    /** The op's name from the target's own ggml_op_name(), e.g. MUL_MAT; UNARY/GLU carry their sub-op. */
    String opName(int op, int opParam0);

    /** Ops the CPU node loop skips without computing (NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE). */
    boolean isEmpty(int op);

    /** The GGML_TENSOR_FLAG_COMPUTE bit, or 0 in releases without it (then every non-empty node runs). */
    int computeFlag();
}
