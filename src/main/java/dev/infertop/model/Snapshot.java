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
        SchedTotals intervalSched,
        SchedTotals totalSched,
        CounterTotals intervalCounters,
        CounterTotals totalCounters,
        List<BackendOps> intervalBackendOps,
        List<BackendOps> totalBackendOps,
        MoeTotals moe,
        Limits limits) {

    public Snapshot {
        intervalBackends = List.copyOf(intervalBackends);
        totalBackends = List.copyOf(totalBackends);
        layers = List.copyOf(layers);
        intervalBackendOps = List.copyOf(intervalBackendOps);
        totalBackendOps = List.copyOf(totalBackendOps);
    }

    /** Without the collector's limits (a replayed snapshot, a test): {@link Limits#NONE}. */
    public Snapshot(long sequence, boolean isFinal, TargetInfo target, long intervalNs, long runNs,
                    TokenTotals intervalTokens, TokenTotals totalTokens, LatencySummary intervalTtft,
                    LatencySummary totalTtft, LatencySummary intervalTpot, LatencySummary totalTpot,
                    List<BackendTotals> intervalBackends, List<BackendTotals> totalBackends,
                    BackendTotals intervalCpuGraphs, BackendTotals totalCpuGraphs, OperatorTotals intervalOperators,
                    OperatorTotals totalOperators, long lostEvents, List<LayerStatus> layers, String targetState,
                    SchedTotals intervalSched, SchedTotals totalSched, CounterTotals intervalCounters,
                    CounterTotals totalCounters, List<BackendOps> intervalBackendOps, List<BackendOps> totalBackendOps,
                    MoeTotals moe) {
        this(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft, totalTtft,
                intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, moe, Limits.NONE);
    }

    public Snapshot withLimits(Limits newLimits) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, moe, newLimits);
    }

    // Copies with one part changed: tests and replays build on a snapshot without repeating every component.

    public Snapshot withLayers(List<LayerStatus> newLayers) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, newLayers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, moe, limits);
    }

    public Snapshot withFinal(boolean newIsFinal) {
        return new Snapshot(sequence, newIsFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, moe, limits);
    }

    public Snapshot withSched(SchedTotals newInterval, SchedTotals newTotal) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, newInterval, newTotal,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, moe, limits);
    }

    public Snapshot withCounters(CounterTotals newInterval, CounterTotals newTotal) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                newInterval, newTotal, intervalBackendOps, totalBackendOps, moe, limits);
    }

    public Snapshot withMoe(MoeTotals newMoe) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, intervalBackendOps, totalBackendOps, newMoe, limits);
    }

    public Snapshot withBackendOps(List<BackendOps> newInterval, List<BackendOps> newTotal) {
        return new Snapshot(sequence, isFinal, target, intervalNs, runNs, intervalTokens, totalTokens, intervalTtft,
                totalTtft, intervalTpot, totalTpot, intervalBackends, totalBackends, intervalCpuGraphs, totalCpuGraphs,
                intervalOperators, totalOperators, lostEvents, layers, targetState, intervalSched, totalSched,
                intervalCounters, totalCounters, newInterval, newTotal, moe);
    }
}
