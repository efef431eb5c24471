package dev.infertop.model;

/**
 * One op type (or fused group such as RMS_NORM+MUL) over some span. {@code groups} counts node groups the
 * CPU loop ran, {@code nodes} graph nodes; wall is time from the previous barrier release to this one, work
 * and wait are summed over threads.
 */
public record OpTotals(String op, long groups, long nodes, long wallNs, long workNs, long waitNs,
                       LatencySummary wall, String lastShape) {
    /** Share of {@code spanNs} spent in this op (wall time). */
    public double wallFraction(long spanNs) {
        return spanNs <= 0 ? 0.0 : (double) wallNs / spanNs;
    }
}
