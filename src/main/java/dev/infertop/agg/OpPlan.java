package dev.infertop.agg;

import dev.infertop.model.OpClass;

/**
 * What the operator layer records for each node group of one grouping ({@code CpuGraph.layoutKey()}): its
 * stats, tensor group, class, shape and timeline label and FLOPs. Worked out once per grouping and reused for
 * every graph that runs it: llama.cpp runs the same graph token after token, and names, lookups and
 * formatting per group would cost more than the attribution itself.
 */
final class OpPlan {
    final Object layoutKey;
    final OpStats[] opStats;
    final OpStats[] tensorGroups;
    final OpClass[] opClasses;
    final String[] shapes;
    final int[] flightLabels;
    /** Estimated FLOPs of each group ({@link OperatorAggregator#flopsOf}), -1 where unknown. */
    final long[] flops;

    OpPlan(Object layoutKey, int groups) {
        this.layoutKey = layoutKey;
        opStats = new OpStats[groups];
        tensorGroups = new OpStats[groups];
        opClasses = new OpClass[groups];
        shapes = new String[groups];
        flightLabels = new int[groups];
        flops = new long[groups];
    }
}
