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
    /** Barrier wait, as the clock samples named it (no exact window covered the cell). */
    public static final byte SAMPLED_WAIT = -3;
    /** Added to a class ordinal for a cell the clock samples named (no exact window covered it). */
    public static final byte SAMPLED = 16;
    /** Put before {@link #currentOp} when the clock samples named it, not an exact window. */
    public static final String SAMPLED_MARK = "~";

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
        return cells[i] >= 0 ? OpClass.values()[cells[i] % SAMPLED] : null;
    }

    /** Whether the clock samples named cell {@code i} (no exact window covered it). */
    public boolean sampled(int i) {
        return cells[i] >= SAMPLED || cells[i] == SAMPLED_WAIT;
    }

    /** Whether cell {@code i} is barrier wait, exact or sampled. */
    public boolean waiting(int i) {
        return cells[i] == WAIT || cells[i] == SAMPLED_WAIT;
    }

    /**
     * The exact lanes with the sampled ones filling the cells no window covered, per thread: a thread's op now is
     * the exact one while its newest exact cell is as recent as its newest sampled one, else the samples' (marked
     * {@link #SAMPLED_MARK}). Lanes with the same cells and end, as both come from the same clock and cell size.
     */
    public static java.util.List<ThreadLane> withSamples(java.util.List<ThreadLane> exact,
                                                         java.util.List<ThreadLane> sampled) {
        if (sampled.isEmpty()) {
            return exact;
        }
        java.util.List<ThreadLane> result = new java.util.ArrayList<>();
        java.util.Map<Integer, ThreadLane> sampledByTid = new java.util.LinkedHashMap<>();
        for (ThreadLane lane : sampled) {
            sampledByTid.put(lane.tid(), lane);
        }
        for (ThreadLane lane : exact) {
            ThreadLane other = sampledByTid.remove(lane.tid());
            result.add(other == null || other.cellNs != lane.cellNs || other.cells.length != lane.cells.length
                    ? lane : merge(lane, other));
        }
        for (ThreadLane lane : sampledByTid.values()) {
            result.add(merge(null, lane));
        }
        return result;
    }

    private static ThreadLane merge(ThreadLane exact, ThreadLane sampled) {
        byte[] cells = new byte[sampled.cells.length];
        long shift = exact == null ? 0 : (sampled.endNs - exact.endNs) / sampled.cellNs;
        int newestExact = -1;
        int newestSampled = -1;
        for (int i = 0; i < cells.length; i++) {
            long j = i + shift;
            byte exactCell = exact == null || j < 0 || j >= exact.cells.length ? IDLE : exact.cells[(int) j];
            byte sampledCell = sampled.cells[i];
            if (exactCell != IDLE) {
                cells[i] = exactCell;
                newestExact = i;
            } else if (sampledCell != IDLE) {
                cells[i] = sampledCell == WAIT ? SAMPLED_WAIT : (byte) (sampledCell + SAMPLED);
                newestSampled = i;
            } else {
                cells[i] = IDLE;
            }
        }
        String op = exact != null && (newestExact >= newestSampled || sampled.currentOp.isEmpty())
                ? exact.currentOp : SAMPLED_MARK + sampled.currentOp;
        return new ThreadLane(sampled.tid, op, sampled.cellNs, sampled.endNs, cells);
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
