package dev.infertop.model;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Everything a view shows for one tick, immutable: who and where ({@code sequence}, {@code state},
 * {@code process}, the probe layers, what was lost or bounded), then the same {@link Figures} twice: the last
 * tick's ({@code interval}) and the whole run's ({@code total}). Views read only this: the collector never
 * reads UI state.
 *
 * @param lostEvents records the probes could not hand over (ring full) or the decoder could not read, run so far
 * @param moe        the MoE layer's figures: a window of recent tokens and the run, kept apart inside
 */
public record Snapshot(
        long sequence,
        RunState state,
        TargetInfo target,
        Figures interval,
        Figures total,
        long lostEvents,
        List<LayerStatus> layers,
        MoeTotals moe,
        Limits limits,
        BudgetStatus budget) {

    public Snapshot {
        layers = List.copyOf(layers);
    }

    /** Without the overhead budget's status (a replayed snapshot, a test): {@link BudgetStatus#NONE}. */
    public Snapshot(long sequence, RunState state, TargetInfo target, Figures interval, Figures total,
                    long lostEvents, List<LayerStatus> layers, MoeTotals moe, Limits limits) {
        this(sequence, state, target, interval, total, lostEvents, layers, moe, limits, BudgetStatus.NONE);
    }

    /** Without the collector's limits (a replayed snapshot, a test): {@link Limits#NONE}. */
    public Snapshot(long sequence, RunState state, TargetInfo target, Figures interval, Figures total,
                    long lostEvents, List<LayerStatus> layers, MoeTotals moe) {
        this(sequence, state, target, interval, total, lostEvents, layers, moe, Limits.NONE);
    }

    /** The collector's last snapshot (the run ended), or a replayed one. */
    public boolean isFinal() {
        return state.ended();
    }

    /** What a view shows: the run's totals once it ended, else the last tick's. */
    public Figures shown() {
        return isFinal() ? total : interval;
    }

    /** Interval or run figures: {@code total} picks the run's. */
    public Figures figures(boolean total) {
        return total ? this.total : interval;
    }

    // Copies with one part changed: tests and replays build on a snapshot without repeating every component.

    public Snapshot withLimits(Limits newLimits) {
        return new Snapshot(sequence, state, target, interval, total, lostEvents, layers, moe, newLimits, budget);
    }

    public Snapshot withLayers(List<LayerStatus> newLayers) {
        return new Snapshot(sequence, state, target, interval, total, lostEvents, newLayers, moe, limits, budget);
    }

    public Snapshot withState(RunState newState) {
        return new Snapshot(sequence, newState, target, interval, total, lostEvents, layers, moe, limits, budget);
    }

    public Snapshot withMoe(MoeTotals newMoe) {
        return new Snapshot(sequence, state, target, interval, total, lostEvents, layers, newMoe, limits, budget);
    }

    /** Both figures changed alike (e.g. {@code s.withFigures(f -> f.withSched(sched))}). */
    public Snapshot withFigures(UnaryOperator<Figures> change) {
        return new Snapshot(sequence, state, target, change.apply(interval), change.apply(total), lostEvents, layers,
                moe, limits, budget);
    }

    public Snapshot withInterval(Figures newInterval) {
        return new Snapshot(sequence, state, target, newInterval, total, lostEvents, layers, moe, limits, budget);
    }

    public Snapshot withBudget(BudgetStatus newBudget) {
        return new Snapshot(sequence, state, target, interval, total, lostEvents, layers, moe, limits, newBudget);
    }
}
