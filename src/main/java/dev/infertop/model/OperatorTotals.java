package dev.infertop.model;

import java.util.List;

/** The operator layer over some span: per op type, per thread, and how many graphs could be attributed. */
public record OperatorTotals(List<OpTotals> ops, List<ThreadTotals> threads, long graphsAttributed,
                             long graphsUnattributed) {
    public static final OperatorTotals EMPTY = new OperatorTotals(List.of(), List.of(), 0, 0);

    public OperatorTotals {
        ops = List.copyOf(ops);
        threads = List.copyOf(threads);
    }

    public long nodes() {
        return ops.stream().mapToLong(OpTotals::nodes).sum();
    }
}
