package dev.infertop.model;

import java.util.List;

/**
 * The ops of the graphs one backend other than the CPU computed over some span (BLAS, CUDA, ...): nodes per
 * op, counted when each graph starts. The backend computes a graph as a whole, so an op's time is known only
 * from graphs whose computing nodes all have that op (a BLAS split of matmuls): {@link Op#timed()} says so.
 */
public record BackendOps(String backend, long graphs, long busyNs, List<Op> ops) {
    public BackendOps {
        ops = List.copyOf(ops);
    }

    /**
     * @param nodes  nodes with this op
     * @param timeNs busy time of the graphs made only of this op (and views)
     * @param timed  every node of this op was in such a graph, so timeNs is all of its time
     */
    public record Op(String op, long nodes, long timeNs, boolean timed) {}

    /** Nodes over all ops. */
    public long nodes() {
        return ops.stream().mapToLong(Op::nodes).sum();
    }
}
