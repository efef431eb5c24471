package dev.infertop.agg;

import dev.infertop.model.MoeTotals;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Per expert, over the run: the MoE nodes it was active in, their wall times (a histogram) and its share of
 * them by the rows it ran. Single writer: the MoE layer's.
 */
final class ExpertTimes {
    private final List<Histogram> nodeTimes = new ArrayList<>();
    private double[] rowShareNs = new double[0];
    private long[] activeNodes = new long[0];

    /** A MoE node of {@code nodeNs} ran {@code rowsByExpert}: each active expert gets the node, and its rows' share. */
    void record(long nodeNs, long[] rowsByExpert) {
        long allRows = 0;
        for (long rows : rowsByExpert) {
            allRows += rows;
        }
        for (int e = 0; e < rowsByExpert.length; e++) {
            if (rowsByExpert[e] == 0) {
                continue;
            }
            ensureExpert(e);
            activeNodes[e]++;
            nodeTimes.get(e).recordValue(Math.max(1, nodeNs));
            rowShareNs[e] += (double) nodeNs * rowsByExpert[e] / allRows;
        }
    }

    /** Expert {@code e}'s figures, with its reuse distance from {@code reuse}. */
    MoeTotals.ExpertStats stats(int e, ReuseTracker reuse) {
        ensureExpert(e);
        Histogram h = nodeTimes.get(e);
        boolean timed = h.getTotalCount() > 0;
        return new MoeTotals.ExpertStats(e, activeNodes[e],
                timed ? h.getValueAtPercentile(50) / 1e6 : Double.NaN,
                timed ? h.getValueAtPercentile(99) / 1e6 : Double.NaN, rowShareNs[e] / 1e6,
                reuse.meanDistance(e), reuse.tokensSinceLast(e));
    }

    private void ensureExpert(int e) {
        while (nodeTimes.size() <= e) {
            nodeTimes.add(new Histogram(2));
        }
        if (e >= activeNodes.length) {
            activeNodes = Arrays.copyOf(activeNodes, e + 1);
            rowShareNs = Arrays.copyOf(rowShareNs, e + 1);
        }
    }
}
