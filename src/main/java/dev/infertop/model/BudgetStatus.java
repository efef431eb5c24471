package dev.infertop.model;

import java.util.Locale;

/**
 * The overhead budget as the last sample cycle saw it: what the user allows ({@code --budget}), what infertop
 * estimates it costs now and would cost tracing every graph (probe hits × the measured cost of one hit, its BPF
 * programs' run time and its own CPU, over the target's own CPU time), and what it samples to stay within.
 *
 * @param budgetPercent      the limit; 0 = none (trace everything)
 * @param estimatePercent    the estimated cost now; NaN until measured
 * @param fullTracingPercent the estimate with every graph traced; NaN until measured
 * @param arrivalShare       the share of the time the operator layer's per-thread probes are attached (1 = always)
 * @param sampling           what is sampled, in words ("every graph", "1.0 s of every 6.2 s", ...)
 * @param windowS            how long one sample window keeps the per-thread probes attached
 * @param failed             the budget gave up mid-run (a reading or a switch failed) and switched the operator
 *                           layer off: nothing is estimated any more; {@code sampling} says why
 * @param hitCost            what one uprobe hit costs in the estimate: measured, or {@link HitCost#DEFAULT}
 * @param heldWindowAgeS     how old the operator figures shown are, where the live view holds the last window's
 *                           between windows (view.SampledWindowHold); NaN where they are this interval's
 */
public record BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent,
                           double arrivalShare, String sampling, double windowS, boolean failed, HitCost hitCost,
                           double heldWindowAgeS) {
    /** A status on {@code hitCost} whose operator figures are this interval's. */
    public BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent, double arrivalShare,
                        String sampling, double windowS, boolean failed, HitCost hitCost) {
        this(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS, failed, hitCost,
                Double.NaN);
    }

    /** The same status, the operator figures shown held from a window {@code ageS} seconds old. */
    public BudgetStatus withHeldWindowAge(double ageS) {
        return new BudgetStatus(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS,
                failed, hitCost, ageS);
    }

    /** "window 12 s ago" while the operator figures shown are held from the last window, else "". */
    public String heldWindowText() {
        return Double.isNaN(heldWindowAgeS) ? "" : SampledFigures.ageText(heldWindowAgeS);
    }

    /** No budget controller (a replayed snapshot, a test): nothing to show. */
    public static final BudgetStatus NONE = new BudgetStatus(0, Double.NaN, Double.NaN, 1, "");

    public BudgetStatus {
        java.util.Objects.requireNonNull(hitCost, "hitCost");
    }

    /** A status on the default hit cost (nothing measured). */
    public BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent, double arrivalShare,
                        String sampling, double windowS, boolean failed) {
        this(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS, failed,
                HitCost.DEFAULT);
    }

    /** A budget at work (not failed). */
    public BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent, double arrivalShare,
                        String sampling, double windowS) {
        this(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS, false);
    }

    /** A budget at work on {@code hitCost}. */
    public BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent, double arrivalShare,
                        String sampling, double windowS, HitCost hitCost) {
        this(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS, false, hitCost);
    }

    /** The budget failed closed: "failed: WHY; operator layer switched off" (JSON budget.sampling). */
    public static BudgetStatus failed(double budgetPercent, String why) {
        return new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 0, "failed: " + why, BUDGET_WINDOW_S, true);
    }

    /** A status whose windows are {@link #BUDGET_WINDOW_S} long. */
    public BudgetStatus(double budgetPercent, double estimatePercent, double fullTracingPercent, double arrivalShare,
                        String sampling) {
        this(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, BUDGET_WINDOW_S);
    }

    public boolean present() {
        return this != NONE && !sampling.isEmpty();
    }

    public boolean measured() {
        return Double.isFinite(estimatePercent);
    }

    /** The header's words: "budget 1% · est 0.7% (all 4.1%) · ops 1.0 s of every 6.2 s". */
    public String headerText() {
        String limit = budgetPercent > 0 ? String.format(Locale.ROOT, "budget %s%%", trim(budgetPercent)) : "budget none";
        if (!measured()) {
            return limit + " · " + sampling;
        }
        return String.format(Locale.ROOT, "%s · est %.1f%% (all %.1f%%) · ops %s", limit, estimatePercent,
                fullTracingPercent, sampling);
    }

    /** The header's cost cell: "cost ~0.7% / 1% budget" (its estimate against the limit). */
    public String costText() {
        if (failed) {
            return "cost: unknown, budget failed";
        }
        String limit = budgetPercent > 0 ? trim(budgetPercent) + "% budget" : "no budget";
        return measured() ? String.format(Locale.ROOT, "cost ~%.1f%% / %s", estimatePercent, limit)
                : "cost: measuring / " + limit;
    }

    /**
     * After the operator layer's state while windows sample it: " 1s/6.2s" (attached 1 s of every 6.2 s). Not
     * the held window's age: the panels that show window figures say it, and in the header's layers line it
     * pushed the layers after the operator's past the screen's edge.
     */
    public String windowsText() {
        if (!present() || arrivalShare >= 1 || arrivalShare <= 0) {
            return "";
        }
        double periodS = windowS / arrivalShare;
        return String.format(Locale.ROOT, " %ss/%.1fs", trim(windowS), periodS);
    }

    /** The length of a sample window unless the budget needs shorter ones (session.BudgetPlan.ON_MS). */
    public static final double BUDGET_WINDOW_S = 1.0;

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.2f", value);
    }

    /** This status with {@code newHitCost}. */
    public BudgetStatus withHitCost(HitCost newHitCost) {
        return new BudgetStatus(budgetPercent, estimatePercent, fullTracingPercent, arrivalShare, sampling, windowS,
                failed, newHitCost, heldWindowAgeS);
    }
}
