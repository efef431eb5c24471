package dev.infertop.agg;

import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

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
            if (!totals) {
                stats.interval = stats.recorder.getIntervalHistogram(stats.interval);
                stats.recorder.addInterval(stats.interval, stats.total);
            }
            if (stats.counts.total(OpStats.GROUPS) == 0) {
                continue; // named by a graph that could not be attributed: nothing ran under it
            }
            Histogram histogram = totals ? stats.total : stats.interval;
            if (histogram == null) {
                histogram = new Histogram(1);
            }
            // One pass over the histogram for the summary, its mean and the plot (p50, p90, p99 are plot points).
            Percentiles.Pass pass = totals
                    ? stats.recorder.totalPercentiles(histogram, LatencyDistribution.PLOT_PERCENTILES)
                    : stats.recorder.intervalPercentiles(histogram, LatencyDistribution.PLOT_PERCENTILES);
            long[] plotValues = pass.values();
            Counts c = stats.counts;
            result.add(new OpTotals(stats.name, c.of(OpStats.GROUPS, totals), c.of(OpStats.NODES, totals),
                    c.of(OpStats.WALL_NS, totals), c.of(OpStats.WORK_NS, totals), c.of(OpStats.WAIT_NS, totals),
                    summary(histogram, plotValues, pass.mean()), stats.lastShape, distribution(histogram, plotValues)));
        }
        result.sort((a, b) -> Long.compare(b.wallNs(), a.wallNs()));
        return result;
    }

    private static LatencySummary summary(Histogram histogram, long[] plotValues, double meanNs) {
        if (histogram.getTotalCount() == 0) {
            return LatencySummary.EMPTY;
        }
        return new LatencySummary(histogram.getTotalCount(), plotValues[P50] / 1e6, plotValues[P90] / 1e6,
                plotValues[P99] / 1e6, histogram.getMaxValue() / 1e6, meanNs / 1e6);
    }

    private static LatencyDistribution distribution(Histogram histogram, long[] plotValues) {
        if (histogram.getTotalCount() == 0) {
            return LatencyDistribution.EMPTY;
        }
        double[] ms = new double[plotValues.length];
        for (int i = 0; i < ms.length; i++) {
            double p = LatencyDistribution.PLOT_PERCENTILES[i];
            ms[i] = (p == 0 ? histogram.getMinValue() : p == 100 ? histogram.getMaxValue() : plotValues[i]) / 1e6;
        }
        return new LatencyDistribution(LatencyDistribution.PLOT_PERCENTILES, ms);
    }
}
