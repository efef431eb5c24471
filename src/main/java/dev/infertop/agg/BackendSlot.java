package dev.infertop.agg;

import dev.infertop.model.BackendTotals;

/** One backend's graph computes, nodes and busy time, counted once ({@link Counts}). */
final class BackendSlot {
    private static final int COMPUTES = 0;
    private static final int NODES = 1;
    private static final int BUSY_NS = 2;

    final String name;
    int flightLabel = -1;
    private final Counts counts = new Counts(3);

    BackendSlot(String name) {
        this.name = name;
    }

    long totalComputes() {
        return counts.total(COMPUTES);
    }

    void record(long durationNs, int nNodes) {
        counts.add(COMPUTES, 1);
        counts.add(BUSY_NS, durationNs);
        if (nNodes > 0) {
            counts.add(NODES, nNodes);
        }
    }

    /** Since the last {@link #sample()}. */
    BackendTotals interval() {
        return new BackendTotals(name, counts.interval(COMPUTES), counts.interval(NODES), counts.interval(BUSY_NS));
    }

    BackendTotals total() {
        return new BackendTotals(name, counts.total(COMPUTES), counts.total(NODES), counts.total(BUSY_NS));
    }

    void sample() {
        counts.sample();
    }
}
