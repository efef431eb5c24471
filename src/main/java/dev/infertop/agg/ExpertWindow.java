package dev.infertop.agg;

import java.util.Arrays;

/**
 * Selection counts per layer × expert (and tokens per layer) over the last {@code ticks} intervals: one slot
 * per interval in a ring; {@link #tick} closes the current interval and drops the oldest. Single writer.
 */
public final class ExpertWindow {
    private final int ticks;
    private final long[][][] counts; // [slot][layer][expert]
    private final long[][] rows;     // [slot][layer]
    private int current;

    public ExpertWindow(int ticks) {
        if (ticks < 1) {
            throw new IllegalArgumentException("window of " + ticks + " ticks");
        }
        this.ticks = ticks;
        this.counts = new long[ticks][0][];
        this.rows = new long[ticks][0];
    }

    public int ticks() {
        return ticks;
    }

    public void add(int layer, int expert, long selections) {
        ensure(layer, expert);
        counts[current][layer][expert] += selections;
    }

    public void addRows(int layer, long tokens) {
        ensure(layer, 0);
        rows[current][layer] += tokens;
    }

    /** Starts a new interval: the oldest of the window is forgotten. */
    public void tick() {
        current = (current + 1) % ticks;
        for (long[] row : counts[current]) {
            Arrays.fill(row, 0);
        }
        Arrays.fill(rows[current], 0);
    }

    /** Sums over the window, [layer][expert], every row {@code experts} long. */
    public long[][] counts(int layers, int experts) {
        long[][] sum = new long[layers][experts];
        for (long[][] slot : counts) {
            for (int l = 0; l < Math.min(layers, slot.length); l++) {
                for (int e = 0; e < Math.min(experts, slot[l].length); e++) {
                    sum[l][e] += slot[l][e];
                }
            }
        }
        return sum;
    }

    public long[] rows(int layers) {
        long[] sum = new long[layers];
        for (long[] slot : rows) {
            for (int l = 0; l < Math.min(layers, slot.length); l++) {
                sum[l] += slot[l];
            }
        }
        return sum;
    }

    private void ensure(int layer, int expert) {
        long[][] slot = counts[current];
        if (layer >= slot.length) {
            int old = slot.length;
            slot = Arrays.copyOf(slot, layer + 1);
            for (int l = old; l <= layer; l++) {
                slot[l] = new long[0];
            }
            counts[current] = slot;
        }
        if (expert >= slot[layer].length) {
            slot[layer] = Arrays.copyOf(slot[layer], expert + 1);
        }
        if (layer >= rows[current].length) {
            rows[current] = Arrays.copyOf(rows[current], layer + 1);
        }
    }
}
