package dev.infertop.model;

/** Graph computes on one backend over some span. */
public record BackendTotals(String backend, long computes, long nodes, long busyNs) {
    /**
     * Share of {@code wallNs} this backend spent computing graphs: at most 1 per thread computing graphs on it (a
     * graph spanning an interval edge is split across the two intervals; several callers at once add up).
     */
    public double busyFraction(long wallNs) {
        return wallNs <= 0 ? 0.0 : (double) busyNs / wallNs;
    }
}
