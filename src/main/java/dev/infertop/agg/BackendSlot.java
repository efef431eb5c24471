package dev.infertop.agg;

import dev.infertop.model.BackendTotals;

import java.util.Arrays;

/**
 * One backend's graph computes, nodes and busy time, counted once ({@link Counts}). Busy time is counted by
 * where it fell: a graph still running at a tick ({@link #inFlight}) has its part up to the tick counted in the
 * interval that ends there, and the rest when its record comes; a record read after the tick for a graph that
 * ended before it (the ring drained late) adds the part before the interval to the run only. So an interval's
 * busy time is at most its length per computing thread.
 */
final class BackendSlot {
    private static final int COMPUTES = 0;
    private static final int NODES = 1;
    private static final int BUSY_NS = 2;
    /** Threads with a graph counted in part at a tick: as many as compute graphs at once (a few). */
    private static final int MAX_SPLIT = 64;

    final String name;
    int flightLabel = -1;
    private final Counts counts = new Counts(3);
    // Per thread, the graph (by its start) counted up to countedUntilNs at a tick.
    private int[] splitTid = new int[4];
    private long[] splitStartNs = new long[4];
    private long[] splitCountedUntilNs = new long[4];
    private int splits;

    BackendSlot(String name) {
        this.name = name;
    }

    long totalComputes() {
        return counts.total(COMPUTES);
    }

    /**
     * A graph that ran from {@code startNs} to {@code endNs} on thread {@code tid}, its record read in the
     * interval that began at {@code intervalStartNs}.
     */
    void record(int tid, long startNs, long endNs, int nNodes, long intervalStartNs) {
        counts.add(COMPUTES, 1);
        if (nNodes > 0) {
            counts.add(NODES, nNodes);
        }
        long fromNs = startNs;
        int at = split(tid);
        if (at >= 0 && splitStartNs[at] == startNs) {
            fromNs = Math.max(startNs, splitCountedUntilNs[at]);
        }
        if (at >= 0) {
            remove(at); // this graph ended: any earlier entry of the thread was a graph whose end was missed
        }
        addBusy(fromNs, endNs, intervalStartNs);
    }

    /** A graph still running at the tick {@code nowNs}: its time up to the tick goes to the interval ending there. */
    void inFlight(int tid, long startNs, long nowNs, long intervalStartNs) {
        int at = split(tid);
        long fromNs = startNs;
        if (at >= 0 && splitStartNs[at] == startNs) {
            fromNs = Math.max(startNs, splitCountedUntilNs[at]);
        } else if (at < 0) {
            at = add(tid);
        }
        splitStartNs[at] = startNs;
        splitCountedUntilNs[at] = Math.max(fromNs, nowNs);
        addBusy(fromNs, nowNs, intervalStartNs);
    }

    /** Busy time from {@code fromNs} to {@code toNs}: before {@code intervalStartNs}, the run's only. */
    private void addBusy(long fromNs, long toNs, long intervalStartNs) {
        long busyNs = Math.max(0, toNs - fromNs);
        long beforeNs = Math.min(busyNs, Math.max(0, intervalStartNs - fromNs));
        counts.addBeforeInterval(BUSY_NS, beforeNs);
        counts.add(BUSY_NS, busyNs - beforeNs);
    }

    private int split(int tid) {
        for (int i = 0; i < splits; i++) {
            if (splitTid[i] == tid) {
                return i;
            }
        }
        return -1;
    }

    private int add(int tid) {
        if (splits == MAX_SPLIT) {
            remove(0); // a thread whose graph never ended (gone mid-graph): the oldest entry goes
        }
        if (splits == splitTid.length) {
            splitTid = Arrays.copyOf(splitTid, splits * 2);
            splitStartNs = Arrays.copyOf(splitStartNs, splits * 2);
            splitCountedUntilNs = Arrays.copyOf(splitCountedUntilNs, splits * 2);
        }
        splitTid[splits] = tid;
        return splits++;
    }

    private void remove(int at) {
        splits--;
        splitTid[at] = splitTid[splits];
        splitStartNs[at] = splitStartNs[splits];
        splitCountedUntilNs[at] = splitCountedUntilNs[splits];
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
