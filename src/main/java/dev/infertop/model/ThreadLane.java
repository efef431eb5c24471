package dev.infertop.model;

import java.util.Arrays;

/**
 * What one worker thread did over the last few seconds, in fixed time cells: cell {@code i} covers
 * {@code [endNs - (cells - i) * cellNs, endNs - (cells - i - 1) * cellNs)}, and holds the op class that took most
 * of the thread's time in it, {@link #WAIT} when barrier wait did, or {@link #IDLE} when the thread ran no graph.
 */
public record ThreadLane(int tid, String currentOp, long cellNs, long endNs, byte[] cells) {
    public static final byte IDLE = -1;
    public static final byte WAIT = -2;

    public ThreadLane {
        cells = cells.clone();
    }

    public int cellCount() {
        return cells.length;
    }

    /** A class ordinal ({@link OpClass#values()}), {@link #WAIT} or {@link #IDLE}. */
    public byte cell(int i) {
        return cells[i];
    }

    public OpClass cellClass(int i) {
        return cells[i] >= 0 ? OpClass.values()[cells[i]] : null;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ThreadLane l && tid == l.tid && cellNs == l.cellNs && endNs == l.endNs
                && currentOp.equals(l.currentOp) && Arrays.equals(cells, l.cells);
    }

    @Override
    public int hashCode() {
        return tid * 31 + Arrays.hashCode(cells);
    }

    @Override
    public String toString() {
        return "ThreadLane[tid=" + tid + ", currentOp=" + currentOp + ", cells=" + cells.length + "]";
    }
}
