package dev.infertop.model;

import java.util.List;

/**
 * Everything a view shows for one tick, immutable. {@code interval*} fields cover the last tick,
 * {@code total*} fields the whole run. Views read only this: the collector never reads UI state.
 */
public record Snapshot(
        long sequence,
        boolean isFinal,
        TargetInfo target,
        long intervalNs,
        long runNs,
        TokenTotals intervalTokens,
        TokenTotals totalTokens,
        LatencySummary intervalTtft,
        LatencySummary totalTtft,
        LatencySummary intervalTpot,
        LatencySummary totalTpot,
        List<BackendTotals> intervalBackends,
        List<BackendTotals> totalBackends,
        BackendTotals intervalCpuGraphs,
        BackendTotals totalCpuGraphs,
        OperatorTotals intervalOperators,
        OperatorTotals totalOperators,
        long lostEvents,
        List<LayerStatus> layers,
        String targetState,
        MoeTotals moe) {

    public Snapshot {
        intervalBackends = List.copyOf(intervalBackends);
        totalBackends = List.copyOf(totalBackends);
        layers = List.copyOf(layers);
    }
}
