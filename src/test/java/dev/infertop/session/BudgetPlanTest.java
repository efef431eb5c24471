package dev.infertop.session;

import dev.infertop.model.BudgetStatus;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BudgetPlanTest {
    private static final long SECOND = 1_000_000_000L;
    /** The machine had a core idle all along: infertop's own CPU took nothing from the target's threads. */
    private static final long IDLE_CORE = SECOND;

    /**
     * A 1 s window of a 2-thread target (2 s of CPU): 8,000 hits of which 7,400 are per-thread arrivals, 1 µs
     * each, 2 ms of BPF time, 10 ms of infertop's CPU. Arrivals ≈ 7.4 + 1.85 = 9.25 ms of ~1.99 s of work
     * (0.47 %), the rest ≈ 0.6 + 0.15 + 10 = 10.75 ms (0.54 %).
     */
    private static BudgetPlan.Phase window() {
        return new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 2 * SECOND, 10_000_000, IDLE_CORE);
    }

    @Test
    void aTinyBudgetSamplesTheOperatorLayerInWindows() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        assertTrue(plan.afterOnPhase(window()) > 0, "over the budget: the per-thread probes go away for a while");
        // The gap measures the rest alone (the same 0.54 % here), then windows follow the budget.
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 150_000, 2 * SECOND, 10_000_000, IDLE_CORE));
        long offMs = plan.afterOnPhase(window());
        assertTrue(offMs > BudgetPlan.FIRST_OFF_MS, "gaps as long as the budget needs: " + offMs);
        BudgetStatus status = plan.status();
        assertTrue(status.arrivalShare() < 1);
        assertTrue(status.fullTracingPercent() > 0.6, "tracing everything costs more than the budget: " + status);
        assertTrue(status.sampling().endsWith(" s"), "within the budget, not the fewest: " + status.sampling());
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
        assertEquals(BudgetPlan.UNLIMITED_ON_MS, plan.windowMs(), "nothing to decide: the estimate is read seldom");
        assertTrue(BudgetPlan.UNLIMITED_ON_MS > BudgetPlan.ON_MS);
    }

    @Test
    void aBudgetDecidesAfterEveryOneSecondWindow() {
        // Within the budget now, but a busier target must be sampled within a second of its getting busy.
        BudgetPlan plan = new BudgetPlan(5, 1000, "");
        assertEquals(0, plan.afterOnPhase(window()));
        assertEquals(BudgetPlan.ON_MS, plan.windowMs());
        assertEquals(1.0, plan.status().windowS(), 1e-9);
        assertEquals(1000, BudgetPlan.ON_MS);
    }

    @Test
    void theGapMeasuresTheBaseAndTheWindowsFollowIt() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        long first = plan.afterOnPhase(window());
        // Without the per-thread probes infertop's own CPU falls too: the base is smaller, the windows longer.
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 100_000, 2 * SECOND, 2_000_000, IDLE_CORE));
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
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 100_000, 2 * SECOND, 2_000_000, IDLE_CORE));
        long offMs = plan.afterOnPhase(window());
        assertEquals(BudgetPlan.MAX_OFF_MS, offMs);
        assertTrue(plan.status().estimatePercent() > 0.01, "the base alone is over: the status shows it, not hides it");
        assertEquals("0.25 s of every 30.3 s, the fewest", plan.status().sampling(), "and says why it is over");
        assertEquals(BudgetPlan.MIN_ON_MS, plan.windowMs(), "the shortest windows");
        assertEquals(0.25, plan.status().windowS(), 1e-9);
        assertEquals(0.25 / 30.25, plan.status().arrivalShare(), 1e-9);
    }

    /**
     * One 1 s window in 31 s would cost more than the budget allows, but shorter ones fit: the gaps stay at
     * their longest (the table's age) and the windows shrink until base + share × arrivals fits.
     */
    @Test
    void whereOneSecondInThirtyIsTooMuchTheWindowsGetShorter() {
        // Traps dear (8 µs a hit): the 7,400 arrivals of a window are ~3.0 % of the target's work, the rest
        // (600 hits, 0.1 ms BPF, 2 ms of CPU) ~0.34 %. A budget of 0.4 % leaves ~0.06 % for windows: a share of
        // ~2 %, under the 3.2 % of 1 s in 31 s.
        BudgetPlan plan = new BudgetPlan(0.4, 8000, "");
        plan.afterOnPhase(window());
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 100_000, 2 * SECOND, 2_000_000, IDLE_CORE));
        assertEquals(BudgetPlan.MAX_OFF_MS, plan.afterOnPhase(window()), "gaps as long as the table allows");
        long onMs = plan.windowMs();
        assertTrue(onMs > BudgetPlan.MIN_ON_MS && onMs < BudgetPlan.ON_MS, "a window between: " + onMs);
        BudgetStatus status = plan.status();
        assertEquals(onMs / 1e3, status.windowS(), 1e-9);
        assertTrue(status.estimatePercent() <= 0.4 + 1e-9, "within the budget: " + status);
        assertTrue(status.estimatePercent() > 0.38, "and no shorter than it needs: " + status);
        assertFalse(status.sampling().contains("fewest"), status.sampling());
        assertTrue(status.sampling().matches("0\\.\\d+ s of every 30\\.\\d s"), status.sampling());
        assertEquals(String.format(java.util.Locale.ROOT, " %.2fs/%.1fs", onMs / 1e3, (onMs + 30_000) / 1e3),
                status.windowsText(), "the header's windows");
    }

    @Test
    void aBusyTargetWithNoGraphYetDecidesNothing() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        // Loading the model: the target is busy, infertop's JIT too, but no per-thread probe ran.
        assertEquals(0, plan.afterOnPhase(new BudgetPlan.Phase(2 * SECOND, 3, 0, 5000, SECOND, 900_000_000, IDLE_CORE)));
        assertFalse(plan.status().measured(), "nothing decided before graphs flow");
    }

    /**
     * --budget 0 over a run whose phases so far only loaded the model (no graph yet: nothing decided): every graph
     * is traced all along, and a run that ends here must say so, not "measuring" as a budget's undecided first
     * window does.
     */
    @Test
    void budgetZeroSaysEveryGraphBeforeAnyPhaseComputedAGraph() {
        BudgetPlan plan = new BudgetPlan(0, 1000, "");
        assertEquals(0, plan.afterOnPhase(new BudgetPlan.Phase(2 * SECOND, 3, 0, 5000, SECOND, 900_000_000, IDLE_CORE)));
        assertEquals("every graph", plan.status().sampling());
        assertEquals(1, plan.status().arrivalShare());
        assertEquals("measuring", new BudgetPlan(0.6, 1000, "").status().sampling(), "a limit: undecided");
    }

    @Test
    void anIdleTargetDecidesNothing() {
        BudgetPlan plan = new BudgetPlan(0.6, 1000, "");
        assertEquals(0, plan.afterOnPhase(new BudgetPlan.Phase(SECOND, 10, 0, 1000, 10_000_000, 5_000_000, IDLE_CORE)));
        assertFalse(plan.status().measured(), "no estimate from an idle second");
    }

    @Test
    void ownCpuOnABusyMachineCostsEveryThreadThatWaitsAtTheBarrier() {
        // The window above with no idle time on the machine: the 10 ms of infertop's CPU took a core from one of
        // the target's 2 busy threads, and the other spun at the barrier as long: 20 ms of the target's work.
        BudgetPlan.Phase saturated = new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 2 * SECOND, 10_000_000, 0);
        assertEquals(20_000_000, saturated.ownCostNs(), 1);
        assertEquals(10_000_000, window().ownCostNs(), 1, "a free core: its own nanoseconds only");
        BudgetPlan.Phase halfCovered = new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 2 * SECOND, 10_000_000,
                4_000_000);
        assertEquals(16_000_000, halfCovered.ownCostNs(), 1, "the idle time covers 4 ms; 6 ms displaced, twice");
        BudgetPlan.Phase fourThreads = new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 4 * SECOND, 10_000_000,
                0);
        assertEquals(40_000_000, fourThreads.ownCostNs(), 1);

        BudgetPlan onIdle = new BudgetPlan(5, 1000, "");
        onIdle.afterOnPhase(window());
        BudgetPlan onBusy = new BudgetPlan(5, 1000, "");
        onBusy.afterOnPhase(saturated);
        assertEquals(onIdle.status().fullTracingPercent() + 100 * 10e6 / (2e9 - 10e6),
                onBusy.status().fullTracingPercent(), 1e-6, "the estimate holds the displaced work");
        // With a budget between the two, only the busy machine samples.
        BudgetPlan tight = new BudgetPlan(1.2, 1000, "");
        assertEquals(0, tight.afterOnPhase(window()));
        assertTrue(new BudgetPlan(1.2, 1000, "").afterOnPhase(saturated) > 0);
    }

    @Test
    void tracingEveryGraphTheEstimateFollowsTheLatestWindowNotTheStart() {
        // budget 0: no gap ever measures the rest. The first window holds infertop's start-up (its JIT: 270 ms of
        // CPU), which stayed in the estimate for the whole run (14 % shown, ~4 % true, on the bench model).
        BudgetPlan plan = new BudgetPlan(0, 1000, "");
        plan.afterOnPhase(new BudgetPlan.Phase(SECOND, 8_000, 7_400, 2_000_000, 2 * SECOND, 270_000_000, IDLE_CORE));
        double atStart = plan.status().estimatePercent();
        plan.afterOnPhase(window());
        assertEquals(1.01, plan.status().estimatePercent(), 0.02, "the steady window's figure");
        assertTrue(atStart > 10, "the start's window was expensive: " + atStart);
    }

    @Test
    void aGapDearerThanTheWindowAfterItDoesNotMakeEveryGraphLookFree() {
        // A loaded machine: infertop's own CPU, most of the base, was higher in the gap (40 ms) than in the window
        // after it (10 ms). Window minus base is below zero; the windows still cost their own traps (0.47 %), so
        // base (2 %) + arrivals is over the 1 % budget and the windows stay the fewest, not every graph.
        BudgetPlan plan = new BudgetPlan(1, 1000, "");
        plan.afterOnPhase(window());
        plan.afterOffPhase(new BudgetPlan.Phase(SECOND, 600, 0, 150_000, 2 * SECOND, 40_000_000, IDLE_CORE));
        assertTrue(plan.afterOnPhase(window()) > 0, "the per-thread probes go away again");
        BudgetStatus status = plan.status();
        assertTrue(status.arrivalShare() < 1, status.toString());
        assertTrue(status.sampling().endsWith(", the fewest"), status.sampling());
        assertEquals(2.0 + 0.47, status.fullTracingPercent(), 0.05, "base + the windows' own traps");
    }
}
