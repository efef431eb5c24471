package dev.infertop.agg;

import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Percentiles;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Freezes {@link OpStats} into the snapshot's {@link OpTotals}: the interval's (closing it) or the run's. */
final class OpFigures {
    // Indexes of p50, p90, p99 in LatencyDistribution.PLOT_PERCENTILES.
    private static final int P50 = 2;
    private static final int P90 = 4;
    private static final int P99 = 6;

    private OpFigures() {}

    /**
     * Each op's figures, sorted by wall time. {@code totals} false: the interval since the last call, whose
     * histograms are swapped here (call it first, then the run's); the counters' sample is taken by the caller.
     */
    static List<OpTotals> of(Collection<OpStats> statsList, boolean totals) {
        List<OpTotals> result = new ArrayList<>();
        for (OpStats stats : statsList) {
            IntervalRecorder recorder = stats.recorder;
            if (!totals) {
                recorder.closeInterval();
            }
            if (stats.counts.total(OpStats.GROUPS) == 0) {
                continue; // named by a graph that could not be attributed: nothing ran under it
            }
            // From the recorder's buckets: the summary, its mean and the plot (p50, p90, p99 are plot points).
            Percentiles.Pass pass = totals
                    ? recorder.totalPercentiles(LatencyDistribution.PLOT_PERCENTILES)
                    : recorder.intervalPercentiles(LatencyDistribution.PLOT_PERCENTILES);
            long count = totals ? recorder.totalCount() : recorder.intervalCount();
            long minNs = totals ? recorder.totalMin() : recorder.intervalMin();
            long maxNs = totals ? recorder.totalMax() : recorder.intervalMax();
            long[] plotValues = pass.values();
            Counts c = stats.counts;
            result.add(new OpTotals(stats.name, c.of(OpStats.GROUPS, totals), c.of(OpStats.NODES, totals),
                    c.of(OpStats.WALL_NS, totals), c.of(OpStats.WORK_NS, totals), c.of(OpStats.WAIT_NS, totals),
                    summary(count, maxNs, plotValues, pass.mean()), stats.lastShape,
                    distribution(count, minNs, maxNs, plotValues)));
        }
        result.sort((a, b) -> Long.compare(b.wallNs(), a.wallNs()));
        return result;
    }

    private static LatencySummary summary(long count, long maxNs, long[] plotValues, double meanNs) {
        return LatencySummary.ofNanos(count, plotValues[P50], plotValues[P90], plotValues[P99], maxNs, meanNs);
    }

    private static LatencyDistribution distribution(long count, long minNs, long maxNs, long[] plotValues) {
        if (count == 0) {
            return LatencyDistribution.EMPTY;
        }
        double[] ms = new double[plotValues.length];
        for (int i = 0; i < ms.length; i++) {
            double p = LatencyDistribution.PLOT_PERCENTILES[i];
            ms[i] = (p == 0 ? minNs : p == 100 ? maxNs : plotValues[i]) / 1e6;
        }
        return new LatencyDistribution(LatencyDistribution.PLOT_PERCENTILES, ms);
    }
}
