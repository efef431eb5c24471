package dev.infertop.model;

/** Graph computes on one backend over some span. */
public record BackendTotals(String backend, long computes, long nodes, long busyNs) {
    /** Share of {@code wallNs} this backend spent computing graphs (can exceed 1 with parallel callers). */
    public double busyFraction(long wallNs) {
        return wallNs <= 0 ? 0.0 : (double) busyNs / wallNs;
    }
}
