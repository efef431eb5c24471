package dev.infertop.model;

import java.util.List;

/**
 * The operator layer over some span: per op type, per tensor group (layer × attention/FFN), per thread, how
 * many graphs could be attributed, and each thread's recent activity (lanes; the same in interval and total).
 */
public record OperatorTotals(List<OpTotals> ops, List<ThreadTotals> threads, long graphsAttributed,
                             long graphsUnattributed, List<OpTotals> tensorGroups, List<ThreadLane> lanes,
                             List<OpEstimate> estimated, OpSampleTotals sampled) {
    public static final OperatorTotals EMPTY = new OperatorTotals(List.of(), List.of(), 0, 0);

    public OperatorTotals {
        ops = List.copyOf(ops);
        threads = List.copyOf(threads);
        tensorGroups = List.copyOf(tensorGroups);
        lanes = List.copyOf(lanes);
        estimated = List.copyOf(estimated);
        sampled = sampled == null ? OpSampleTotals.EMPTY : sampled;
    }

    /** Without clock samples (a replayed snapshot, a test). */
    public OperatorTotals(List<OpTotals> ops, List<ThreadTotals> threads, long graphsAttributed,
                          long graphsUnattributed, List<OpTotals> tensorGroups, List<ThreadLane> lanes,
                          List<OpEstimate> estimated) {
        this(ops, threads, graphsAttributed, graphsUnattributed, tensorGroups, lanes, estimated, OpSampleTotals.EMPTY);
    }

    /** The same figures with the clock samples' and the lanes they filled. */
    public OperatorTotals withSampled(OpSampleTotals newSampled, List<ThreadLane> newLanes) {
        return new OperatorTotals(ops, threads, graphsAttributed, graphsUnattributed, tensorGroups, newLanes,
                estimated, newSampled);
    }

    /** Without estimates over every graph (a replayed snapshot, a test). */
    public OperatorTotals(List<OpTotals> ops, List<ThreadTotals> threads, long graphsAttributed,
                          long graphsUnattributed, List<OpTotals> tensorGroups, List<ThreadLane> lanes) {
        this(ops, threads, graphsAttributed, graphsUnattributed, tensorGroups, lanes, List.of());
    }

    /** The same figures with {@code newEstimated} as the estimates over every graph. */
    public OperatorTotals withEstimated(List<OpEstimate> newEstimated) {
        return new OperatorTotals(ops, threads, graphsAttributed, graphsUnattributed, tensorGroups, lanes, newEstimated,
                sampled);
    }

    public OperatorTotals(List<OpTotals> ops, List<ThreadTotals> threads, long graphsAttributed,
                          long graphsUnattributed) {
        this(ops, threads, graphsAttributed, graphsUnattributed, List.of(), List.of());
    }

    public long nodes() {
        return ops.stream().mapToLong(OpTotals::nodes).sum();
    }

    /** Node groups summed over threads: each is one probe hit on a thread's barrier call. */
    public long threadGroups() {
        return threads.stream().mapToLong(ThreadTotals::groups).sum();
    }
}
