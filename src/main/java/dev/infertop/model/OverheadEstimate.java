package dev.infertop.model;

/**
 * The one estimate of what watching costs, as every output shows it: the live view's header, a JSON line's
 * {@code budget}, Prometheus' {@code infertop_probe_cost_ratio} and a snapshot's
 * {@code probe_overhead_cpu_fraction_est} all read it from here, so they cannot disagree on a snapshot.
 * <p>
 * It is the overhead budget's estimate where the budget has one (the kernel's run counts of infertop's probe
 * programs × the {@link HitCost} of one hit, their BPF run time and infertop's own CPU, over the target's CPU).
 * Where it has none (its first seconds, a kernel without BPF run-time stats, a replayed snapshot), the probe hits
 * the interval's records imply × the same hit cost, over the interval ({@link ProbeCostEstimate}). Either way the
 * hit cost is the measured one when there is one, else {@link HitCost#DEFAULT}, and {@link #hitCost} says which.
 *
 * @param fraction what watching costs, as a fraction (0.012 = 1.2 %)
 * @param source   which estimate it is
 * @param hitCost  the cost of one hit it rests on
 */
public record OverheadEstimate(double fraction, Source source, HitCost hitCost) {
    /** Where the figure comes from. */
    public enum Source {
        /** The overhead budget's estimate: kernel run counts, BPF time and infertop's CPU, of the target's CPU. */
        BUDGET,
        /** Hits implied by the interval's records, as a share of one CPU: where the budget has no estimate. */
        RECORDS
    }

    /** The estimate for {@code s}. */
    public static OverheadEstimate of(Snapshot s) {
        BudgetStatus budget = s.budget();
        HitCost hit = budget.hitCost();
        if (budget.present() && budget.measured()) {
            return new OverheadEstimate(budget.estimatePercent() / 100, Source.BUDGET, hit);
        }
        return new OverheadEstimate(ProbeCostEstimate.cpuFraction(s, hit), Source.RECORDS, hit);
    }

    /** Rounded as the snapshot's summary writes it (4 decimals of the fraction). */
    public double roundedFraction() {
        return Math.round(fraction * 1e4) / 1e4;
    }
}
