package dev.infertop.model;

/**
 * One op type (or fused group such as RMS_NORM+MUL), or one tensor group ("blk.3 attention"), over some span.
 * {@code groups} counts node groups the CPU loop ran, {@code nodes} graph nodes; wall is time from the previous
 * barrier release to this one, work and wait are summed over threads. {@code distribution} is the wall time
 * per group at the plot percentiles.
 */
public record OpTotals(String op, long groups, long nodes, long wallNs, long workNs, long waitNs,
                       LatencySummary wall, String lastShape, LatencyDistribution distribution) {

    public OpTotals(String op, long groups, long nodes, long wallNs, long workNs, long waitNs,
                    LatencySummary wall, String lastShape) {
        this(op, groups, nodes, wallNs, workNs, waitNs, wall, lastShape, LatencyDistribution.EMPTY);
    }

    /** Share of {@code spanNs} spent in this op (wall time). */
    public double wallFraction(long spanNs) {
        return spanNs <= 0 ? 0.0 : (double) wallNs / spanNs;
    }

    /** Groups per second over {@code spanNs}. */
    public double groupsPerSecond(long spanNs) {
        return spanNs <= 0 ? 0.0 : groups * 1e9 / spanNs;
    }
}
