package dev.infertop.session;

import dev.infertop.model.HitCost;
import dev.infertop.model.BudgetStatus;

import java.util.Locale;

/**
 * The overhead budget's arithmetic, with no I/O (BudgetPlanTest drives it): from what one phase cost, how long
 * the operator layer's per-thread probes stay away next.
 * <p>
 * Cost of a phase = probe hits × the measured cost of one hit + the BPF programs' run time + infertop's own CPU
 * (weighted, below), as a fraction of the target's own work (its CPU time less the traps it spent in our probes).
 * <p>
 * infertop's own CPU costs the target more than its nanoseconds where the machine had no idle core for it: it
 * then took a core from one of the target's threads, and ggml's threads meet at a barrier after every node, so
 * the others spin there until that one catches up. Each such nanosecond costs as many nanoseconds of the target's
 * work as it keeps threads busy (its CPU time over the wall time); on an idle core, one. Where every core is busy,
 * the machine's idle time during the phase is below infertop's own CPU, and the part above it is what displaced.
 * (So counted, the estimate agreed with a measured slowdown: measurements.md, "Every graph against the defaults".)
 * <p>
 * The per-thread
 * probes' part of it (their hits and their share of the BPF time) is what sampling scales: attached a share d of
 * the time, the cost is base + d × arrivals, so d = (budget − base) ÷ arrivals. llama.cpp runs the same graph
 * token after token, so the graphs of the windows give the per-op shares and percentiles of all of them. Once a
 * gap has measured base, a window's arrivals are what it cost beyond base (hits, BPF time and infertop's extra
 * CPU); before, the per-thread probes' own hits.
 */
final class BudgetPlan {
    /** How long a sample window keeps the per-thread probes attached (after their attach). */
    static final long ON_MS = Math.round(BudgetStatus.BUDGET_WINDOW_S * 1000);
    /**
     * The shortest window, for a budget that one window of {@link #ON_MS} in every {@link #MAX_OFF_MS} would
     * exceed: on a machine where a trap is dear, one full window per longest gap alone took half of the default
     * budget (measurements.md, "A machine where a trap is dear"). A quarter of a second still holds several
     * decode graphs of a mid-sized model, and the op table gathers window after window; shorter, and the detach's
     * own tail (the kernel unregisters a uprobe slowly, the probes firing meanwhile) would be most of the window.
     */
    static final long MIN_ON_MS = 250;
    /**
     * A window with no limit ({@code --budget 0}): nothing to decide, only the estimate to show, so it is read
     * as seldom as with the operator layer off. At one reading a second the budget's thread was a visible share of
     * infertop's CPU with every graph traced (measurements.md), nearly all interpreted: code run once a second
     * stays below the JIT's thresholds for minutes.
     */
    static final long UNLIMITED_ON_MS = 5000;
    /** The first window, measured before anything is decided, at the start and when switched on live. */
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
    record Phase(long wallNs, long uprobeHits, long arrivalHits, long bpfRunNs, long targetCpuNs, long ownCpuNs,
                 long machineIdleNs) {
        /**
         * infertop's own CPU in the target's lost work: the part the machine's idle time covered once, the part
         * that took a core from the target as many times as the target kept threads busy.
         */
        double ownCostNs() {
            double displaced = Math.max(0, ownCpuNs - Math.max(0, machineIdleNs));
            double busyThreads = Math.max(1, (double) targetCpuNs / wallNs);
            return ownCpuNs + displaced * (busyThreads - 1);
        }
    }

    private final double budgetPercent;
    private final double hitNs;
    private final String hitNote;
    private double basePercent = Double.NaN;
    private boolean baseMeasuredInGap;
    private double arrivalsPercent = Double.NaN;
    private double onShare = 1;
    private long onMs = ON_MS;
    private long offMs;
    private String sampling;

    /**
     * @param budgetPercent the limit (0: none: the plan only estimates)
     * @param hitNs         what one uprobe hit costs here
     * @param hitNote       empty when {@code hitNs} was measured, else why it is assumed
     */
    BudgetPlan(double budgetPercent, double hitNs, String hitNote) {
        this.budgetPercent = budgetPercent;
        this.hitNs = hitNs;
        this.hitNote = hitNote;
        this.sampling = samplingUndecided(budgetPercent);
    }

    /**
     * What the status says before a phase with graphs has decided anything (the first reading not yet taken, or
     * only phases of loading the model so far): with no limit nothing is ever decided and every graph is traced
     * from the start, which a run that ends before its first graph-computing phase is read must say too; under a
     * limit, the first window is being measured.
     */
    static String samplingUndecided(double budgetPercent) {
        return budgetPercent > 0 ? "measuring" : "every graph";
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
        // Everything a window cost: every probe and all of infertop's CPU (the collector's work on the arrivals'
        // records is part of what a window adds, not of the rest).
        double windowPercent = 100 * (probeNs(phase.uprobeHits(), phase.bpfRunNs()) + phase.ownCostNs()) / work;
        // The per-thread probes' own hits and their share of the BPF time: what the windows add at the least.
        double ownTrapsPercent = 100 * (phase.uprobeHits() == 0 ? 0 : probeNs(phase.arrivalHits(),
                phase.bpfRunNs() * (double) phase.arrivalHits() / phase.uprobeHits())) / work;
        if (baseMeasuredInGap) {
            // At least their own traps: on a loaded machine infertop's own CPU, most of the base, varies from
            // phase to phase by more than a window adds, and a gap that cost more than the window after it would
            // make tracing every graph look free, with no gap after it to measure the base again.
            arrivalsPercent = Math.max(ownTrapsPercent, windowPercent - basePercent);
        } else {
            // No gap yet (the first window, or every graph traced so far): their own traps stand for what the
            // windows add. Each window replaces the last figure: the first holds infertop's start-up (its JIT
            // compiling the collector), which must not stay in the estimate for the whole run.
            arrivalsPercent = ownTrapsPercent;
            basePercent = windowPercent - arrivalsPercent;
        }
        plan();
        return offMs;
    }

    /** How long the next window lasts when {@link #afterOnPhase} keeps the per-thread probes (returns 0). */
    long windowMs() {
        return budgetPercent > 0 ? onMs : UNLIMITED_ON_MS;
    }

    /** After a gap between windows: the cost without the per-thread probes. */
    void afterOffPhase(Phase phase) {
        double work = work(phase);
        if (work <= 0) {
            return;
        }
        basePercent = 100 * (probeNs(phase.uprobeHits(), phase.bpfRunNs()) + phase.ownCostNs()) / work;
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
            onMs = ON_MS;
            offMs = 0;
            sampling = "every graph";
            return;
        }
        double fitting = (budgetPercent - basePercent) / arrivalsPercent;
        long longestOffMs = baseMeasuredInGap ? MAX_OFF_MS : FIRST_OFF_MS;
        if (fitting >= (double) ON_MS / (ON_MS + longestOffMs)) {
            onMs = ON_MS;
            offMs = Math.min(longestOffMs, (long) Math.ceil(ON_MS * (1 / Math.min(1, fitting) - 1))); // up: within
        } else {
            // Gaps as long as the op table allows: shorter windows then, down to MIN_ON_MS (down: within).
            offMs = longestOffMs;
            onMs = Math.max(MIN_ON_MS, (long) Math.floor(Math.max(0, fitting) / (1 - fitting) * offMs));
        }
        onShare = (double) onMs / (onMs + offMs);
        // The fewest windows the op table allows (the shortest, one every 30 s) still cost more than the budget:
        // the estimate stays above it, and the header says why rather than leave a reader to think the budget
        // was ignored.
        boolean fewest = offMs == MAX_OFF_MS && fitting < onShare;
        sampling = String.format(Locale.ROOT, "%s s of every %.1f s%s", seconds(onMs), (onMs + offMs) / 1e3,
                fewest ? ", the fewest" : "");
    }

    /** "1.0", "0.25", "0.4": a window's length, as short as it is exact. */
    private static String seconds(long ms) {
        return ms % 100 == 0 ? String.format(Locale.ROOT, "%.1f", ms / 1e3) : String.format(Locale.ROOT, "%.2f", ms / 1e3);
    }

    /** The target's own work in the phase: its CPU time less what it spent in our traps; 0 when idle. */
    private double work(Phase phase) {
        double work = phase.targetCpuNs() - probeNs(phase.uprobeHits(), phase.bpfRunNs());
        return work < IDLE_CPU_SHARE * phase.wallNs() ? 0 : work;
    }

    private double probeNs(long hits, double bpfNs) {
        return hits * hitNs + bpfNs;
    }

    /** The hit cost this plan multiplies hits by, and whether it was measured. */
    HitCost hitCost() {
        return new HitCost(hitNs, hitNote.isEmpty());
    }

    BudgetStatus status() {
        double full = basePercent + (Double.isNaN(arrivalsPercent) ? 0 : arrivalsPercent);
        double estimate = basePercent + (Double.isNaN(arrivalsPercent) ? 0 : onShare * arrivalsPercent);
        String words = hitNote.isEmpty() ? sampling : sampling + "; " + hitNote;
        return new BudgetStatus(budgetPercent, estimate, full, onShare, words, onMs / 1e3,
                hitCost());
    }
}
