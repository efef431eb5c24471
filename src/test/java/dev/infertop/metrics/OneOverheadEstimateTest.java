package dev.infertop.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SummaryWriter;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.HitCost;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.snapshot.SnapshotFixtures;
import dev.infertop.view.Fixtures;
import dev.infertop.view.HelpPanel;
import dev.infertop.json.JsonLinesView;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One overhead estimate everywhere: on the same snapshot the live view's header, Prometheus'
 * {@code infertop_probe_cost_ratio}, summary.json's {@code probe_overhead_cpu_fraction_est} and a JSON line's
 * {@code budget.estimate_percent} (where the budget has one) say the same figure, and that figure rests on the
 * measured hit cost when there is one.
 */
class OneOverheadEstimateTest {
    private static final Pattern HEADER_PERCENT = Pattern.compile("~([0-9]+\\.[0-9])%");
    private static final Pattern GAUGE = Pattern.compile("(?m)^infertop_probe_cost_ratio ([0-9.eE-]+)$");

    /** Fixtures' snapshot: no budget (a replay, a test): the records' hits at the default hit cost. */
    private static Snapshot noBudget() {
        return Fixtures.snapshot(LayerStatus.State.ON);
    }

    /** The budget has an estimate of its own, on a hit cost infertop machine measured. */
    private static Snapshot budgetMeasured() {
        return noBudget().withBudget(new BudgetStatus(1, 2.1, 4.0, 0.25, "1.0 s of every 4.0 s", 1.0,
                new HitCost(5_500, true)));
    }

    /** The budget's first phase has not ended, but its hit cost was measured: the records' hits at that cost. */
    private static Snapshot budgetMeasuring() {
        return noBudget().withBudget(new BudgetStatus(1, Double.NaN, Double.NaN, 1, "measuring", 1.0,
                new HitCost(5_500, true)));
    }

    private record Outputs(String header, double headerPercent, double gauge, double summary, JsonNode line) {}

    private static Outputs outputs(Snapshot s) throws IOException {
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(100, 24));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        UiState ui = new UiState();
        ui.record(s);
        new MonitorScreen(Theme.MONOCHROME, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "q quit").draw(screen.newTextGraphics(), s, ui);
        screen.refresh(Screen.RefreshType.COMPLETE);
        StringBuilder row = new StringBuilder();
        for (int col = 0; col < 100; col++) {
            row.append(terminal.getCharacter(col, 2).getCharacterString());
        }
        screen.stopScreen();
        String header = row.toString().strip();
        Matcher percent = HEADER_PERCENT.matcher(header.substring(header.lastIndexOf("tok/s")));
        assertTrue(percent.find(), "no cost figure in the header row: " + header);

        Matcher gauge = GAUGE.matcher(MetricsMappingTest.prometheusText(MetricsMappingTest.frame(s)));
        assertTrue(gauge.find(), "no infertop_probe_cost_ratio sample");

        SnapshotContent captured = SnapshotFixtures.content();
        SnapshotContent content = new SnapshotContent(s, captured.window(), captured.tensorNames(),
                captured.histograms(), captured.ticks(), captured.trigger(), captured.createdEpochMs(),
                captured.infertopVersion(), captured.threadNames(), captured.dag());
        double summary = SummaryWriter.json(content, List.of(), List.of()).path("snapshot")
                .path("probe_overhead_cpu_fraction_est").asDouble(Double.NaN);
        JsonNode line = new ObjectMapper().readTree(JsonLinesView.toJson(s));
        return new Outputs(header, Double.parseDouble(percent.group(1)), Double.parseDouble(gauge.group(1)), summary,
                line);
    }

    private static void assertAgree(Outputs o) {
        assertEquals(o.gauge() * 100, o.headerPercent(), 0.05, "header and Prometheus disagree: " + o.header());
        assertEquals(o.gauge(), o.summary(), 0.00005, "Prometheus and summary.json disagree");
        JsonNode estimate = o.line().path("budget").path("estimate_percent");
        if (!estimate.isMissingNode()) {
            assertEquals(o.gauge() * 100, estimate.asDouble(), 0.0005, "Prometheus and the JSON line disagree");
        }
    }

    @Test
    void everyOutputShowsTheBudgetsEstimateWhereItHasOne() throws IOException {
        Outputs o = outputs(budgetMeasured());
        assertAgree(o);
        assertEquals(0.021, o.gauge(), 1e-12);
        assertTrue(o.header().contains("cost ~2.1% / 1% budget"), o.header());
    }

    @Test
    void withoutABudgetEstimateEveryOutputShowsTheRecordsHitsAtTheDefaultCostLabelledAGuess() throws IOException {
        Outputs o = outputs(noBudget());
        assertAgree(o);
        // Fixtures: 2 x (70 decode calls + 140 graph computes) + 16,500 barrier hits + 69 graphs x 3 threads'
        // starts = 17,127 hits x 800 ns (HitCost.DEFAULT) = 13.7016 ms in 1 s.
        assertEquals(0.0137016, o.gauge(), 1e-9);
        assertTrue(o.header().endsWith("probes ~1.4% cpu (guess)"), o.header());
    }

    @Test
    void aMeasuredHitCostIsUsedBeforeTheBudgetsFirstEstimate() throws IOException {
        Outputs o = outputs(budgetMeasuring());
        assertAgree(o);
        assertEquals(17_127 * 5_500 / 1e9, o.gauge(), 1e-9);
        assertTrue(o.header().endsWith("probes ~9.4% cpu (est.)"), o.header());
    }
}
