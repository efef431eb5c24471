package dev.infertop.agg;

import dev.infertop.model.BackendTotals;
import dev.infertop.model.OpEstimate;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per op, figures over every CPU graph, where the overhead budget's windows traced only some: each interval's
 * traced figures plus its untraced graphs' share. The CPU path's graph count and busy time (the graph layer,
 * always on) say how much went untraced; the run's windows say how it divides among ops: an op's node groups
 * per traced graph, and its share of the traced wall time. Summed interval by interval into the run's, so a
 * counter made of them only grows and a rate over any range has figures between windows.
 */
final class OpEstimator {
    /** Per op: {groups, wallNs} estimated over the run. */
    private final Map<String, double[]> run = new LinkedHashMap<>();

    /** The interval's and the run's operator figures with their estimates; {@code cpu} the interval's CPU graphs. */
    OperatorTotals[] estimate(OperatorTotals interval, OperatorTotals total, BackendTotals cpu) {
        long untracedGraphs = Math.max(0, cpu.computes() - interval.graphsAttributed());
        long tracedWallNs = 0;
        for (OpTotals op : interval.ops()) {
            tracedWallNs += op.wallNs();
        }
        long untracedBusyNs = Math.max(0, cpu.busyNs() - tracedWallNs);
        long runGraphs = total.graphsAttributed();
        long runWallNs = 0;
        for (OpTotals op : total.ops()) {
            runWallNs += op.wallNs();
        }
        Map<String, double[]> intervalEstimates = new LinkedHashMap<>();
        for (OpTotals op : interval.ops()) {
            intervalEstimates.put(op.op(), new double[] {op.groups(), op.wallNs()});
        }
        if (runGraphs > 0 && runWallNs > 0) {
            for (OpTotals op : total.ops()) {
                double[] estimate = intervalEstimates.computeIfAbsent(op.op(), name -> new double[2]);
                estimate[0] += untracedGraphs * (double) op.groups() / runGraphs;
                estimate[1] += untracedBusyNs * (double) op.wallNs() / runWallNs;
            }
        }
        List<OpEstimate> intervalList = new ArrayList<>();
        for (Map.Entry<String, double[]> e : intervalEstimates.entrySet()) {
            intervalList.add(new OpEstimate(e.getKey(), e.getValue()[0], e.getValue()[1]));
            double[] sum = run.computeIfAbsent(e.getKey(), name -> new double[2]);
            sum[0] += e.getValue()[0];
            sum[1] += e.getValue()[1];
        }
        List<OpEstimate> runList = new ArrayList<>();
        for (Map.Entry<String, double[]> e : run.entrySet()) {
            runList.add(new OpEstimate(e.getKey(), e.getValue()[0], e.getValue()[1]));
        }
        return new OperatorTotals[] {interval.withEstimated(intervalList), total.withEstimated(runList)};
    }
}
