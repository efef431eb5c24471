package dev.infertop.model;

import java.util.List;

/**
 * Every figure of one span of a run: a snapshot carries two, the last tick's ({@link Snapshot#interval()}) and
 * the run's so far ({@link Snapshot#total()}), so a figure added here is added to both, once. A reader that
 * shows either picks one {@code Figures} and reads everything from it.
 *
 * @param spanNs     the time these figures cover: the tick's interval, or the run so far
 * @param cpuGraphs  the CPU backend's graph computes as its own probe sees them (the graph layer)
 * @param backendOps ops counted per graph on backends other than the CPU
 * @param offload    enqueue against device-complete time per backend, and what the scheduler copied between them
 * @param whisper    whisper.cpp's own units (encoder passes, audio, decoder tokens); empty for another program
 */
public record Figures(
        long spanNs,
        TokenTotals tokens,
        LatencySummary ttft,
        LatencySummary tpot,
        List<BackendTotals> backends,
        BackendTotals cpuGraphs,
        OperatorTotals operators,
        SchedTotals sched,
        CounterTotals counters,
        List<BackendOps> backendOps,
        RooflineTotals roofline,
        OffloadTotals offload,
        WhisperTotals whisper) {

    public Figures {
        backends = List.copyOf(backends);
        backendOps = List.copyOf(backendOps);
        offload = offload == null ? OffloadTotals.EMPTY : offload;
        whisper = whisper == null ? WhisperTotals.EMPTY : whisper;
    }

    /** Figures without offload figures (a snapshot written before they existed). */
    public Figures(long spanNs, TokenTotals tokens, LatencySummary ttft, LatencySummary tpot, List<BackendTotals> backends,
                   BackendTotals cpuGraphs, OperatorTotals operators, SchedTotals sched, CounterTotals counters,
                   List<BackendOps> backendOps, RooflineTotals roofline) {
        this(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps, roofline,
                OffloadTotals.EMPTY, WhisperTotals.EMPTY);
    }

    public Figures withOffload(OffloadTotals newOffload) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps,
                roofline, newOffload, whisper);
    }

    public Figures withWhisper(WhisperTotals newWhisper) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps,
                roofline, offload, newWhisper);
    }

    /** Figures without a roofline (the operator layer off, or a snapshot written before it existed). */
    public Figures(long spanNs, TokenTotals tokens, LatencySummary ttft, LatencySummary tpot, List<BackendTotals> backends,
                   BackendTotals cpuGraphs, OperatorTotals operators, SchedTotals sched, CounterTotals counters,
                   List<BackendOps> backendOps) {
        this(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps,
                RooflineTotals.EMPTY);
    }

    // Copies with one figure changed: tests and replays build on figures without repeating every one.

    public Figures withTokens(TokenTotals newTokens) {
        return new Figures(spanNs, newTokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps, roofline, offload, whisper);
    }

    public Figures withBackends(List<BackendTotals> newBackends, List<BackendOps> newBackendOps) {
        return new Figures(spanNs, tokens, ttft, tpot, newBackends, cpuGraphs, operators, sched, counters,
                newBackendOps, roofline, offload, whisper);
    }

    public Figures withSched(SchedTotals newSched) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, newSched, counters, backendOps, roofline, offload, whisper);
    }

    public Figures withBackendOps(List<BackendOps> newBackendOps) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, newBackendOps,
                roofline, offload, whisper);
    }

    public Figures withRoofline(RooflineTotals newRoofline) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, counters, backendOps,
                newRoofline, offload, whisper);
    }

    /**
     * The operator layer's figures (its table and the roofline that costs its nodes) of {@code other} (an earlier window's) in these: its ops, threads and roofline, but these
     * figures' own lanes and clock samples, which are current whether or not a window ran.
     */
    public Figures withOperatorFiguresOf(Figures other) {
        OperatorTotals held = other.operators.withSampled(operators.sampled(), operators.lanes());
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, held, sched, counters, backendOps,
                other.roofline, offload, whisper);
    }

    public Figures withOperators(OperatorTotals newOperators) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, newOperators, sched, counters, backendOps,
                roofline, offload, whisper);
    }

    public Figures withCounters(CounterTotals newCounters) {
        return new Figures(spanNs, tokens, ttft, tpot, backends, cpuGraphs, operators, sched, newCounters, backendOps, roofline, offload, whisper);
    }
}
