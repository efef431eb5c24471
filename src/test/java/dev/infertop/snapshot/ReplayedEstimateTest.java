package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SummaryWriter;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.HitCost;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OverheadEstimate;
import dev.infertop.model.Snapshot;
import dev.infertop.view.Fixtures;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

/** A replay shows the overhead estimate its summary.json holds, not one of its own. */
class ReplayedEstimateTest {
    private static JsonNode summary(Snapshot s) {
        SnapshotContent captured = SnapshotFixtures.content();
        return SummaryWriter.json(new SnapshotContent(s, captured.window(), captured.tensorNames(),
                captured.histograms(), captured.ticks(), captured.trigger(), captured.createdEpochMs(),
                captured.infertopVersion(), captured.threadNames(), captured.dag()), List.of(), List.of());
    }

    @Test
    void theReplayedBudgetGivesTheSummarysEstimate() {
        Snapshot run = Fixtures.snapshot(LayerStatus.State.ON).withBudget(new BudgetStatus(1, 2.1, 4.0, 0.25,
                "0.25 s of every 30.3 s", 0.25, new HitCost(5_500, true)));
        JsonNode summary = summary(run);
        BudgetStatus replayed = SummarySnapshot.budget(summary);
        assertEquals("0.25 s of every 30.3 s", replayed.sampling());
        assertEquals(0.25, replayed.arrivalShare());
        assertEquals(0.25, replayed.windowS());
        double estimate = OverheadEstimate.of(Fixtures.snapshot(LayerStatus.State.ON).withBudget(replayed)).fraction();
        assertEquals(summary.path("snapshot").path("probe_overhead_cpu_fraction_est").asDouble(), estimate, 0.00005);
        assertEquals(0.021, estimate, 1e-12);
    }

    @Test
    void aSummaryWithoutABudgetReplaysWithoutOne() {
        assertSame(BudgetStatus.NONE, SummarySnapshot.budget(summary(Fixtures.snapshot(LayerStatus.State.ON))));
    }

    @Test
    void oddFiguresCountAsNotMeasuredAndTheWordsAreMadeVisible() throws Exception {
        JsonNode hostile = new ObjectMapper().readTree("""
                {"budget": {"limit_percent": -1, "estimate_percent": "9", "full_tracing_percent": 1e400,
                 "arrival_share": 7, "window_s": 0, "sampling": "every graph\\u001b[2J"}}""");
        BudgetStatus replayed = SummarySnapshot.budget(hostile);
        assertFalse(replayed.measured());
        assertEquals(0, replayed.budgetPercent());
        assertEquals(1, replayed.arrivalShare());
        assertEquals(BudgetStatus.BUDGET_WINDOW_S, replayed.windowS());
        assertEquals("every graph\\x1b[2J", replayed.sampling());
    }
}
