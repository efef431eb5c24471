package dev.infertop.model;

import java.util.List;

/**
 * The ops of the graphs one backend other than the CPU computed over some span (BLAS, CUDA, ...): nodes per
 * op, counted when each graph starts. The backend computes a graph as a whole, so an op's time is known only
 * from graphs whose computing nodes all have that op (a BLAS split of matmuls): {@link Op#timed()} says so.
 */
public record BackendOps(String backend, long graphs, long busyNs, List<Op> ops, NodeDispatch dispatch) {
    public BackendOps {
        ops = List.copyOf(ops);
    }

    /** Ops whose host dispatch was not followed node by node. */
    public BackendOps(String backend, long graphs, long busyNs, List<Op> ops) {
        this(backend, graphs, busyNs, ops, null);
    }

    /**
     * How the host dispatched the nodes of the {@code graphs} it was followed through, node by node (the Vulkan
     * backend records each node it dispatches; a fused dispatch computes the nodes after it, which get no call of
     * their own). Host dispatch, never device time. Per op: {@code calls + fused} is its nodes in those graphs.
     */
    public record NodeDispatch(long graphs, List<OpDispatch> ops) {
        public NodeDispatch {
            ops = List.copyOf(ops);
        }

        /** Calls over all ops (a view's call dispatches nothing). */
        public long calls() {
            return ops.stream().mapToLong(OpDispatch::calls).sum();
        }

        /** Calls for ops that compute: the dispatches recorded. */
        public long dispatches() {
            return ops.stream().filter(op -> !op.view()).mapToLong(OpDispatch::calls).sum();
        }

        /** Nodes computed by an earlier node's dispatch. */
        public long fusedNodes() {
            return ops.stream().mapToLong(OpDispatch::fused).sum();
        }
    }

    /**
     * @param calls nodes of this op the backend was called to record
     * @param fused nodes of this op it skipped: an earlier node's fused dispatch computes them
     * @param view  the op computes nothing (a view, a reshape): its calls dispatch nothing
     */
    public record OpDispatch(String op, long calls, long fused, boolean view) {}

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
