package dev.infertop.session;

import dev.infertop.model.BudgetStatus;

import java.util.Locale;

/**
 * The overhead budget's arithmetic, with no I/O (BudgetPlanTest drives it): from what one phase cost, how long
 * the operator layer's per-thread probes stay away next.
 * <p>
 * Cost of a phase = probe hits × the measured cost of one hit + the BPF programs' run time + infertop's own CPU,
 * as a fraction of the target's own work (its CPU time less the traps it spent in our probes). The per-thread
 * probes' part of it (their hits and their share of the BPF time) is what sampling scales: attached a share d of
 * the time, the cost is base + d × arrivals, so d = (budget − base) ÷ arrivals. llama.cpp runs the same graph
 * token after token, so the graphs of the windows give the per-op shares and percentiles of all of them.
 */
final class BudgetPlan {
    /** How long a sample window keeps the per-thread probes attached (after their attach). */
    static final long ON_MS = Math.round(BudgetStatus.BUDGET_WINDOW_S * 1000);
    /** The first window, measured before anything is decided: long enough for a steady figure. */
    static final long FIRST_ON_MS = 2000;
    /**
     * The longest gap before one has measured the cost without the per-thread probes: the first window's
     * "rest" holds infertop's own start-up (JIT compiling the collector), far above its steady cost.
     */
    static final long FIRST_OFF_MS = 2000;
    /** The longest gap between windows: the op table is at most this old. */
    static final long MAX_OFF_MS = 30_000;
    /** Below this share of one CPU the target is idle: nothing to slow down, and nothing to decide on. */
    static final double IDLE_CPU_SHARE = 0.05;

    /** What one phase took: differences of cumulative counts over {@code wallNs}. */
    record Phase(long wallNs, long uprobeHits, long arrivalHits, long bpfRunNs, long targetCpuNs, long ownCpuNs) {}

    private final double budgetPercent;
    private final double hitNs;
    private final String hitNote;
    private double basePercent = Double.NaN;
    private boolean baseMeasuredInGap;
    private double arrivalsPercent = Double.NaN;
    private double onShare = 1;
    private long offMs;
    private String sampling = "measuring";

    /**
     * @param budgetPercent the limit (0: none: the plan only estimates)
     * @param hitNs         what one uprobe hit costs here
     * @param hitNote       empty when {@code hitNs} was measured, else why it is assumed
     */
    BudgetPlan(double budgetPercent, double hitNs, String hitNote) {
        this.budgetPercent = budgetPercent;
        this.hitNs = hitNs;
        this.hitNote = hitNote;
    }

    /**
     * After a phase with the per-thread probes attached: how long to keep them away next, 0 to keep them.
     * An idle phase changes nothing.
     */
    long afterOnPhase(Phase phase) {
        double work = work(phase);
        if (work <= 0 || phase.arrivalHits() == 0) {
            // Idle, or busy with no graph yet (loading the model; infertop's own start-up): nothing the
            // windows would change. Decide on the next window that computes graphs.
            return 0;
        }
        double probes = probeNs(phase.uprobeHits(), phase.bpfRunNs());
        double arrivals = phase.uprobeHits() == 0 ? 0
                : probeNs(phase.arrivalHits(), phase.bpfRunNs() * (double) phase.arrivalHits() / phase.uprobeHits());
        arrivalsPercent = 100 * arrivals / work;
        double baseHere = 100 * (probes - arrivals + phase.ownCpuNs()) / work;
        if (Double.isNaN(basePercent)) {
            basePercent = baseHere; // until a gap between windows measures it without the per-thread probes
        }
        plan();
        return offMs;
    }

    /** After a gap between windows: the cost without the per-thread probes. */
    void afterOffPhase(Phase phase) {
        double work = work(phase);
        if (work <= 0) {
            return;
        }
        basePercent = 100 * (probeNs(phase.uprobeHits(), phase.bpfRunNs()) + phase.ownCpuNs()) / work;
        baseMeasuredInGap = true;
        plan();
    }

    /** The operator layer is off: no windows; the estimate is the rest's. */
    void operatorOff(Phase phase) {
        afterOffPhase(phase);
        arrivalsPercent = Double.NaN;
        onShare = 0;
        offMs = 0;
        sampling = "operator layer off";
    }

    private void plan() {
        if (budgetPercent <= 0 || arrivalsPercent <= 0 || basePercent + arrivalsPercent <= budgetPercent) {
            onShare = 1;
            offMs = 0;
            sampling = "every graph";
            return;
        }
        double minShare = (double) ON_MS / (ON_MS + MAX_OFF_MS);
        double share = Math.max(minShare, Math.min(1, (budgetPercent - basePercent) / arrivalsPercent));
        offMs = Math.min(baseMeasuredInGap ? MAX_OFF_MS : FIRST_OFF_MS,
                (long) Math.ceil(ON_MS * (1 / share - 1))); // up: the share stays within
        onShare = (double) ON_MS / (ON_MS + offMs);
        sampling = String.format(Locale.ROOT, "%.1f s of every %.1f s", ON_MS / 1e3, (ON_MS + offMs) / 1e3);
    }

    /** The target's own work in the phase: its CPU time less what it spent in our traps; 0 when idle. */
    private double work(Phase phase) {
        double work = phase.targetCpuNs() - probeNs(phase.uprobeHits(), phase.bpfRunNs());
        return work < IDLE_CPU_SHARE * phase.wallNs() ? 0 : work;
    }

    private double probeNs(long hits, double bpfNs) {
        return hits * hitNs + bpfNs;
    }

    BudgetStatus status() {
        double full = basePercent + (Double.isNaN(arrivalsPercent) ? 0 : arrivalsPercent);
        double estimate = basePercent + (Double.isNaN(arrivalsPercent) ? 0 : onShare * arrivalsPercent);
        String words = hitNote.isEmpty() ? sampling : sampling + "; " + hitNote;
        return new BudgetStatus(budgetPercent, estimate, full, onShare, words);
    }
}
