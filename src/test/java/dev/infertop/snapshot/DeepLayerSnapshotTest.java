package dev.infertop.snapshot;

import dev.infertop.view.BodyPanel;
import com.fasterxml.jackson.databind.JsonNode;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.export.HtmlReportWriter;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.Fixtures;
import dev.infertop.view.HelpPanel;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sched and counters layers in a snapshot: report.html's thread-states and counters sections, the report
 * command's figures (JSON and text), and replay's t and c panels showing the summary's numbers; a layer that
 * was off or could not count says so.
 */
class DeepLayerSnapshotTest {
    @TempDir
    Path temp;

    static final String NO_PMU = "no hardware PMU: the kernel refuses cache-misses, instructions, cycles "
            + "(perf_event_open: No such file or directory); software events still work: --counters software";

    /** refills, instructions, cycles: MUL_MAT 12 refills/1k instr (memory-bound), ADD IPC 2 (compute-bound). */
    static CounterTotals hardware() {
        OpCounters matmul = new OpCounters("MUL_MAT", 4000, 12, 7, List.of(1_200_000L, 100_000_000L, 200_000_000L),
                600_000_000L, 600_000_000L);
        OpCounters add = new OpCounters("ADD", 1000, 0, 0, List.of(1_000L, 10_000_000L, 5_000_000L), 50_000_000L,
                40_000_000L);
        return new CounterTotals("x86_64", List.of("cache-misses", "instructions", "cycles"), 64, 0, 1, 2,
                List.of(matmul, add), List.of(1_201_000L, 110_000_000L, 205_000_000L), 5000, 12, 7, 0, 650_000_000L,
                List.of());
    }

    private static SnapshotContent content(LayerStatus.State sched, LayerStatus counters, CounterTotals totals) {
        SnapshotContent base = SnapshotFixtures.content();
        List<LayerStatus> layers = new ArrayList<>(base.last().layers());
        layers.add(new LayerStatus(Layer.SCHED, sched, sched == LayerStatus.State.OFF ? "switched off live" : "",
                List.of()));
        layers.add(counters);
        SchedTotals schedTotals = sched == LayerStatus.State.ON ? Fixtures.sched() : SchedTotals.EMPTY;
        Snapshot last = base.last().withLayers(layers)
                .withFigures(f -> f.withSched(schedTotals).withCounters(totals));
        return new SnapshotContent(last, base.window(), base.tensorNames(), base.histograms(), base.ticks(),
                base.trigger(), base.createdEpochMs(), base.infertopVersion(), java.util.Map.of(101, "llama-bench"), null);
    }

    private static SnapshotContent recorded() {
        return content(LayerStatus.State.ON, new LayerStatus(Layer.COUNTERS, LayerStatus.State.ON, "", List.of()),
                hardware());
    }

    private static SnapshotContent notRecorded() {
        return content(LayerStatus.State.OFF, new LayerStatus(Layer.COUNTERS, LayerStatus.State.UNAVAILABLE, NO_PMU,
                List.of()), CounterTotals.EMPTY);
    }

    private SnapshotDirectory saved(SnapshotContent content) throws Exception {
        Path dir = temp.resolve("snap");
        SnapshotDirectoryWriter.write(dir, content);
        return SnapshotDirectory.open(dir);
    }

    private static String section(String html, String title) {
        int from = html.indexOf("<h2>" + title);
        assertTrue(from >= 0, "section " + title);
        return html.substring(from, html.indexOf("</section>", from));
    }

    @Test
    void reportPageHasThreadStateBarsInterferersAndPerOpCounters() {
        String html = HtmlReportWriter.html(recorded());
        String states = section(html, "Thread states");
        // bars 430 px wide (560 - 120 label - 10): thread 101 is 60 % running, 30 % runnable, 10 % sleeping
        assertTrue(states.contains("<text x=\"114\" y=\"17\" text-anchor=\"end\">llama-bench 101</text>"), states);
        assertTrue(states.contains("<rect x=\"120.0\" y=\"4\" width=\"258.0\" height=\"18\" fill=\"#2ca02c\"/>"
                + "<rect x=\"378.0\" y=\"4\" width=\"129.0\" height=\"18\" fill=\"#d62728\"/>"
                + "<rect x=\"507.0\" y=\"4\" width=\"43.0\" height=\"18\" fill=\"#999999\"/>"), states);
        assertTrue(states.contains("<text x=\"124\" y=\"27\">running 60.0% runnable 30.0% sleeping 10.0%</text>"), states);
        assertTrue(states.contains(">thread 102</text>"), states);
        // hog ran 330 ms of the 400 ms the threads waited
        assertTrue(states.contains("<tr><td>777</td><td>hog</td><td>330.000</td><td>82.5%</td></tr>"), states);
        assertTrue(states.contains("<tr><td>4242</td><td>llama-bench (target)</td><td>5.000</td><td>1.3%</td></tr>"),
                states);
        String counters = section(html, "Counters per op type");
        assertTrue(counters.contains("<tr><td>MUL_MAT</td><td>4000</td><td>0.500</td><td>12.000</td>"
                + "<td>memory-bound</td></tr>"), counters);
        assertTrue(counters.contains("<tr><td>ADD</td><td>1000</td><td>2.000</td><td>0.100</td>"
                + "<td>compute-bound</td></tr>"), counters);
        assertFalse(counters.contains("class=\"absent\""), counters);
    }

    @Test
    void reportPageSaysWhatWasNotRecordedAndWhy() {
        String html = HtmlReportWriter.html(notRecorded());
        assertTrue(section(html, "Thread states").contains("<p class=\"absent\">not recorded in this run</p>"), html);
        assertTrue(section(html, "Counters per op type").contains("<p class=\"absent\">" + NO_PMU + "</p>"), html);
    }

    @Test
    void reportCommandGivesTheSummarysFigures() throws Exception {
        SnapshotDirectory directory = saved(recorded());
        JsonNode r = SnapshotReport.json(directory);
        JsonNode sched = r.path("sched");
        assertTrue(sched.path("recorded").asBoolean(), r.toString());
        assertEquals(1_400_000_000L, sched.path("running_ns").asLong());
        assertEquals(0.6, sched.path("threads").path("101").path("running_share").asDouble());
        assertEquals(0.3, sched.path("threads").path("101").path("runnable_share").asDouble());
        assertEquals(0.1, sched.path("threads").path("102").path("sleeping_share").asDouble());
        assertEquals("hog", sched.path("interferers").get(0).path("comm").asText());
        assertEquals(0.825, sched.path("interferers").get(0).path("wait_share").asDouble());
        JsonNode mulMat = r.path("counters").path("ops").path("MUL_MAT");
        assertEquals(0.5, mulMat.path("ipc").asDouble());
        assertEquals(12.0, mulMat.path("refills_per_1k_instructions").asDouble());
        assertEquals("memory-bound", mulMat.path("verdict").asText());
        assertEquals("compute-bound", r.path("counters").path("ops").path("ADD").path("verdict").asText());

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true));
        String text = bytes.toString();
        assertTrue(text.contains("Thread states (runnable = waiting for a CPU)\n"), text);
        assertTrue(text.contains("  101         600.000     60.0%     300.000     30.0%    100.000     10.0%        50\n"), text);
        assertTrue(text.contains("  777      hog                 330.000 ms   82.5% of the wait\n"), text);
        // the run's refill bandwidth: the summary's (all refills x 64 B over the run)
        assertTrue(text.contains(String.format(java.util.Locale.ROOT, "Counters per op type\n  set x86_64: "
                + "cache-misses, instructions, cycles, L3 refills %.1f MB/s\n",
                directory.summary().path("counters").path("refill_bytes_per_s").asLong() / 1e6)), text);
        assertTrue(text.contains("  MUL_MAT                           4000   0.500    12.000 memory-bound\n"), text);
    }

    @Test
    void reportCommandSaysWhatWasNotRecordedAndWhy() throws Exception {
        SnapshotDirectory directory = saved(notRecorded());
        JsonNode r = SnapshotReport.json(directory);
        assertFalse(r.path("sched").path("recorded").asBoolean());
        assertEquals("not recorded in this run (sched layer off)", r.path("sched").path("reason").asText());
        assertFalse(r.path("counters").path("recorded").asBoolean());
        assertEquals(NO_PMU, r.path("counters").path("reason").asText());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true));
        String text = bytes.toString();
        assertTrue(text.contains("Thread states (runnable = waiting for a CPU)\n  not recorded in this run (sched layer off)\n"), text);
        assertTrue(text.contains("Counters per op type\n  " + NO_PMU + "\n"), text);
    }

    @Test
    void replayCarriesTheSummarysSchedAndCounters() throws Exception {
        Snapshot s = SummarySnapshot.of(saved(recorded()));
        SchedTotals expected = Fixtures.sched();
        // the summary keeps one record count (off + culprit records)
        assertEquals(new SchedTotals(expected.threads(), expected.ops(), expected.interferers(), 1300, 0, 20_000),
                s.total().sched());
        assertEquals(s.total().sched(), s.interval().sched());
        assertEquals(hardware(), s.total().counters());
    }

    @Test
    void replayedPanelsShowTheSummarysNumbers() throws Exception {
        Snapshot s = SummarySnapshot.of(saved(recorded()));
        UiState ui = new UiState();
        ui.record(s);
        ui.endState = s.state();
        ui.body = BodyPanel.THREAD_STATES;
        DefaultVirtualTerminal terminal = render(s, ui);
        String screen = Fixtures.screen(terminal);
        int heading = Fixtures.find(terminal, "  TID        RUN%");
        assertTrue(heading >= 0, screen);
        assertEquals("  101        60.0   30.0   10.0        50        30", Fixtures.row(terminal, heading + 1).stripTrailing());
        assertEquals("  102        80.0   10.0   10.0        40         5", Fixtures.row(terminal, heading + 2).stripTrailing());
        assertTrue(screen.contains("  777      hog                         330.0    82.5%"), screen);
        ui.body = BodyPanel.OPERATORS;
        ui.body = BodyPanel.COUNTERS;
        terminal = render(s, ui);
        screen = Fixtures.screen(terminal);
        int op = Fixtures.find(terminal, "OP                  GROUPS");
        assertTrue(op >= 0, screen);
        assertTrue(Fixtures.row(terminal, op + 1).startsWith(
                "MUL_MAT               4000    12     7   0.50     12.0     128.0M memory-bound"), screen);
        assertTrue(Fixtures.row(terminal, op + 2).startsWith(
                "ADD                   1000     0     0   2.00      0.1       1.6M compute-bound"), screen);
    }

    private static DefaultVirtualTerminal render(Snapshot s, UiState ui) throws Exception {
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(120, 24));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        new MonitorScreen(Theme.MONOCHROME, List.of("1", "2", "3", "5", "6"),
                List.of(new HelpPanel.Entry(List.of("q"), "quit")), "h help").draw(screen.newTextGraphics(), s, ui);
        screen.refresh(Screen.RefreshType.COMPLETE); // read while started: stopping leaves the private mode
        return terminal;
    }
}
