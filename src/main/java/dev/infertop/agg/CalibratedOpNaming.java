package dev.infertop.agg;

import dev.infertop.process.layout.CalibratedLayout;

/**
 * Op names from the target's own tables (ggml_op_name, ggml_unary_op_name), never a copied table. A UNARY
 * node is named by its unary op (SILU, GELU, ...), as ggml_op_desc() and llama-eval-callback name it.
 */
public final class CalibratedOpNaming implements OpNaming {
    private final CalibratedLayout layout;
    private final boolean[] empty;
    private final int unaryOp;

    public CalibratedOpNaming(CalibratedLayout layout) {
        this.layout = layout;
        this.empty = new boolean[Math.max(1, layout.ops().count())];
        for (int op : layout.emptyOps()) {
            if (op >= 0 && op < empty.length) {
                empty[op] = true;
            }
        }
        this.unaryOp = layout.ops().number("UNARY").orElse(-1);
    }

    @Override
    public String opName(int op, int opParam0) {
        if (op == unaryOp && !layout.ops().unaryOpNames().isEmpty()) {
            return layout.ops().unaryName(opParam0);
        }
        return layout.ops().name(op);
    }

    @Override
    public boolean isEmpty(int op) {
        return op >= 0 && op < empty.length && empty[op];
    }

    @Override
    public int computeFlag() {
        return layout.computeFlag();
    }
}
