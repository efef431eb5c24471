package dev.infertop.session;

import dev.infertop.model.BudgetStatus;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BudgetPlanTest {
    private static final long SECOND = 1_000_000_000L;

    /**
     * A 1 s window of a 2-thread target (2 s of CPU): 8,000 hits of which 7,400 are per-thread arrivals, 1 µs
     * each, 2 ms of BPF time, 10 ms of infertop's CPU. Arrivals ≈ 7.4 + 1.85 = 9.25 ms of ~1.99 s of work
     * (0.47 %), the rest ≈ 0.6 + 0.15 + 10 = 10.75 ms (0.54 %).
     */
    private static BudgetPlan.Phase window() {
        return new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 2 * SECOND, 10_000_000);
    }

    @Test
    void aTinyBudgetSamplesTheOperatorLayerInWindows() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        assertTrue(plan.afterOnPhase(window()) > 0, "over the budget: the per-thread probes go away for a while");
        // The gap measures the rest alone (the same 0.54 % here), then windows follow the budget.
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 150_000, 2 * SECOND, 10_000_000));
        long offMs = plan.afterOnPhase(window());
        assertTrue(offMs > BudgetPlan.FIRST_OFF_MS, "gaps as long as the budget needs: " + offMs);
        BudgetStatus status = plan.status();
        assertTrue(status.arrivalShare() < 1);
        assertTrue(status.fullTracingPercent() > 0.6, "tracing everything costs more than the budget: " + status);
        assertTrue(status.sampling().contains("of every"), status.sampling());
        // share = (0.6 − base) / arrivals ≈ 0.13: 1 s on, ~6.6 s off
        assertEquals(0.13, status.arrivalShare(), 0.03);
        assertTrue(status.estimatePercent() <= 0.6 + 1e-9, "the plan keeps the estimate within the budget: " + status);
    }

    @Test
    void aBudgetAboveTheFullCostTracesEveryGraph() {
        BudgetPlan plan = new BudgetPlan(5, 1000, "");
        assertEquals(0, plan.afterOnPhase(window()));
        BudgetStatus status = plan.status();
        assertEquals(1, status.arrivalShare());
        assertEquals("every graph", status.sampling());
        assertEquals(status.fullTracingPercent(), status.estimatePercent(), 1e-9);
        assertEquals(1.01, status.fullTracingPercent(), 0.02);
    }

    @Test
    void budgetZeroOnlyEstimates() {
        BudgetPlan plan = new BudgetPlan(0, 1000, "");
        assertEquals(0, plan.afterOnPhase(window()));
        assertEquals("every graph", plan.status().sampling());
        assertTrue(plan.status().measured());
    }

    @Test
    void theGapMeasuresTheBaseAndTheWindowsFollowIt() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        long first = plan.afterOnPhase(window());
        // Without the per-thread probes infertop's own CPU falls too: the base is smaller, the windows longer.
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 100_000, 2 * SECOND, 2_000_000));
        long second = plan.afterOnPhase(window());
        assertTrue(second < first, "a cheaper base leaves room for more windows: " + first + " → " + second);
    }

    @Test
    void theFirstGapIsShortUntilItMeasuredTheRest() {
        BudgetPlan plan = new BudgetPlan(0.01, 1000, "");
        assertEquals(BudgetPlan.FIRST_OFF_MS, plan.afterOnPhase(window()), "the first window's rest holds start-up");
    }

    @Test
    void evenTheSmallestShareIsBoundedSoTheTableStaysRecent() {
        BudgetPlan plan = new BudgetPlan(0.01, 1000, "");
        plan.afterOnPhase(window());
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 100_000, 2 * SECOND, 2_000_000));
        long offMs = plan.afterOnPhase(window());
        assertEquals(BudgetPlan.MAX_OFF_MS, offMs);
        assertTrue(plan.status().estimatePercent() > 0.01, "the base alone is over: the status shows it, not hides it");
    }

    @Test
    void aBusyTargetWithNoGraphYetDecidesNothing() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        // Loading the model: the target is busy, infertop's JIT too, but no per-thread probe ran.
        assertEquals(0, plan.afterOnPhase(new BudgetPlan.Phase(2 * SECOND, 3, 0, 5000, SECOND, 900_000_000)));
        assertFalse(plan.status().measured(), "nothing decided before graphs flow");
    }

    @Test
    void anIdleTargetDecidesNothing() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        assertEquals(0, plan.afterOnPhase(new BudgetPlan.Phase(SECOND, 10, 0, 1000, 10_000_000, 5_000_000)));
        assertFalse(plan.status().measured(), "no estimate from an idle second");
    }
}
