package dev.infertop.snapshot;

import dev.infertop.model.TokenTotals;
import com.fasterxml.jackson.databind.JsonNode;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.Fixtures;
import dev.infertop.view.HelpPanel;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A saved snapshot becomes the Snapshot the live view draws, with the summary's numbers. */
class ReplayTest {
    @TempDir
    Path temp;

    private SnapshotDirectory saved() throws Exception {
        SnapshotFixtures.run(new SnapshotOptions(temp.resolve("snap").toString(), 0, true, 10));
        return SnapshotDirectory.open(temp.resolve("snap"));
    }

    @Test
    void snapshotHoldsTheSummarysTotals() throws Exception {
        SnapshotDirectory directory = saved();
        JsonNode summary = directory.summary();
        Snapshot s = SummarySnapshot.of(directory);
        assertTrue(s.isFinal());
        assertEquals("replay", s.state().text());
        assertEquals(4242, s.target().pid());
        assertEquals(3, s.total().tokens().tokensDecode());
        assertEquals(summary.path("decode_tokens_per_s").asDouble(), s.total().tokens().decodeTokensPerSecond(), 0.005);
        assertEquals(summary.path("tpot_ms").path("p50").asDouble(), s.total().tpot().p50Ms());
        OpTotals mulMat = s.total().operators().ops().stream().filter(o -> o.op().equals("MUL_MAT")).findFirst()
                .orElseThrow();
        assertEquals(4, mulMat.groups());
        assertEquals(summary.path("ops").path("MUL_MAT").path("p99_ms").asDouble(), mulMat.wall().p99Ms());
        assertEquals(10, mulMat.distribution().size(), "the latency plot comes from the hlog");
        assertEquals(2, s.total().operators().threads().size());
    }

    /** The CI failure this guards: a summary's 1994.05 tok/s read back as 1994.0499.. showed as 1994.0, not 1994.1. */
    @Test
    void aRateOnAHalfReadsBackToTheSameOneDecimal() {
        for (long tokens : new long[] {1, 7, 2381, 100_003, 9_999_991}) {
            for (double rate : new double[] {1994.05, 0.05, 12.35, 38.45, 9841.75}) {
                long busyNs = SummarySnapshot.busyNs(tokens, rate);
                double readBack = new TokenTotals(0, 0, 0, 0, 0, tokens, 0, busyNs, 0)
                        .decodeTokensPerSecond();
                assertEquals(String.format(java.util.Locale.ROOT, "%10.1f", rate),
                        String.format(java.util.Locale.ROOT, "%10.1f", readBack), tokens + " tokens at " + rate);
            }
        }
    }

    @Test
    void liveViewDrawsTheSummarysNumbers() throws Exception {
        Snapshot s = SummarySnapshot.of(saved());
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(100, 24));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        UiState ui = new UiState();
        ui.record(s);
        ui.endState = s.state();
        new MonitorScreen(Theme.MONOCHROME, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), s, ui);
        screen.refresh(Screen.RefreshType.COMPLETE);
        String text = Fixtures.screen(terminal);
        assertTrue(Fixtures.row(terminal, 0).contains("pid 4242 llama-bench"), text);
        assertTrue(text.contains("replay"), text);
        assertTrue(Fixtures.find(terminal, "MUL_MAT") >= 0, text);
        assertTrue(Fixtures.find(terminal, "RMS_NORM+MUL") >= 0, text);
        assertTrue(text.contains(String.format(Locale.ROOT, "%.0f", s.total().tokens().decodeTokensPerSecond())), text);
        // lanes from trace.json: both threads, each last on ADD (the last group of the last graph)
        int lane7 = Fixtures.find(terminal, "      7 ");
        assertTrue(lane7 >= 0 && Fixtures.row(terminal, lane7).contains("ADD"), text);
        assertTrue(Fixtures.find(terminal, "      8 ") >= 0, text);
        screen.stopScreen();
    }
}
