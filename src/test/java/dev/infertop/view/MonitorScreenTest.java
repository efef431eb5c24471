package dev.infertop.view;

import dev.infertop.model.OpClass;
import dev.infertop.model.ThreadLane;
import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static dev.infertop.view.Fixtures.cell;
import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The live view drawn from a fixed snapshot into Lanterna's virtual terminal, read back cell by cell. At
 * 80x24: header rows 0-4, lanes 5-8 (title + 3 threads), table 9-22 (heading + rows), footer 23.
 */
class MonitorScreenTest {
    private DefaultVirtualTerminal terminal;
    private TerminalScreen screen;
    private final UiState ui = new UiState();

    private void render(Theme theme, Snapshot snapshot, int columns, int rows) throws IOException {
        if (terminal == null) {
            terminal = new DefaultVirtualTerminal(new TerminalSize(columns, rows));
            screen = new TerminalScreen(terminal);
            screen.startScreen();
        } else {
            terminal.setTerminalSize(new TerminalSize(columns, rows));
            screen.doResizeIfNecessary();
        }
        new MonitorScreen(theme, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), snapshot, ui);
        screen.refresh(Screen.RefreshType.DELTA);
    }

    @AfterEach
    void stop() throws IOException {
        screen.stopScreen();
    }

    private Snapshot on() {
        return Fixtures.snapshot(LayerStatus.State.ON);
    }

    @Test
    void headerShowsTargetSpeedsLatencyLayersAndCost() throws IOException {
        ui.record(on());
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 0).startsWith("infertop  pid 4242 llama-bench  model bench.gguf  3 threads"),
                row(terminal, 0));
        assertTrue(row(terminal, 0).contains("running"));
        assertTrue(row(terminal, 1).startsWith("backends CPU 98%"), row(terminal, 1));
        assertTrue(row(terminal, 1).contains("1:token on  2:graph on  3:operator on"), row(terminal, 1));
        assertTrue(row(terminal, 2).startsWith("prefill     4000.0 tok/s"), row(terminal, 2));
        assertTrue(row(terminal, 3).startsWith("decode        69.0 tok/s"), row(terminal, 3));
        assertEquals("█", cell(terminal, 53, 3).getCharacterString()); // one sample: the sparkline's maximum
        assertEquals(" ", cell(terminal, 52, 3).getCharacterString());
        assertTrue(row(terminal, 4).startsWith("TTFT p50 16.00 p99 16.00 ms  TPOT p50 14.20 p99 16.50 ms  lost 0"),
                row(terminal, 4));
        // 2 x (70 decode calls + 140 graph computes) + 16500 barrier hits + 69 x 3 starts = 17127 hits at the
        // default 0.8 us (no hit cost measured: "guess") = 13.7 ms in 1 s.
        assertTrue(row(terminal, 2).endsWith(" probes ~1.4% cpu (guess)"), row(terminal, 2));
        assertEquals(TextColor.ANSI.CYAN_BRIGHT, cell(terminal, 0, 0).getForegroundColor());
        assertEquals(TextColor.ANSI.GREEN_BRIGHT, cell(terminal, row(terminal, 1).indexOf("3:operator"), 1)
                .getForegroundColor());
    }

    @Test
    void lanesShowEachThreadsRecentWorkByClassAndMarkTheUnbalancedOne() throws IOException {
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 5).startsWith("  TID  WORK% NOW"), row(terminal, 5));
        assertTrue(row(terminal, 6).startsWith("    101   90% MUL_MAT"), row(terminal, 6));
        assertTrue(row(terminal, 8).startsWith("!   103   50% SOFT_MAX"), row(terminal, 8));
        assertEquals(TextColor.ANSI.RED_BRIGHT, cell(terminal, 0, 8).getForegroundColor());
        assertEquals(TextColor.ANSI.DEFAULT, cell(terminal, 4, 6).getForegroundColor());
        // The last four cells of the 50-cell strip (columns 30..79): norm, wait, matmul, attention.
        assertEquals("NAMA".replace("NAMA", "N.MA"), row(terminal, 6).substring(76, 80));
        assertEquals(TextColor.ANSI.YELLOW_BRIGHT, cell(terminal, 76, 6).getForegroundColor());
        assertEquals(TextColor.ANSI.WHITE_BRIGHT, cell(terminal, 77, 6).getForegroundColor());
        assertEquals(TextColor.ANSI.RED_BRIGHT, cell(terminal, 78, 6).getForegroundColor());
        assertEquals(TextColor.ANSI.MAGENTA_BRIGHT, cell(terminal, 79, 6).getForegroundColor());
        assertEquals(" ", cell(terminal, 75, 6).getCharacterString()); // idle
    }

    @Test
    void tableSortsByTimeShareAndHighlightsTheSelection() throws IOException {
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 9).startsWith("OP                 CALLS/s TIME%▼   NOW%   P50ms   P90ms   P99ms   MAXms LAST"),
                row(terminal, 9));
        assertTrue(row(terminal, 10).startsWith("MUL_MAT               4000   60.0   80.0   0.120   0.180   0.300   0.410 ffn"),
                row(terminal, 10));
        assertTrue(row(terminal, 11).startsWith("RMS_NORM+MUL"), row(terminal, 11));
        assertTrue(row(terminal, 12).startsWith("SOFT_MAX"), row(terminal, 12));
        assertEquals(TextColor.ANSI.CYAN, cell(terminal, 0, 10).getBackgroundColor());
        assertEquals(TextColor.ANSI.DEFAULT, cell(terminal, 0, 11).getBackgroundColor());
        assertEquals(TextColor.ANSI.GREEN, cell(terminal, 0, 9).getBackgroundColor());
        assertTrue(row(terminal, 23).startsWith("h help  q quit"), row(terminal, 23));
    }

    @Test
    void sortFilterAndGroupingChangeTheRows() throws IOException {
        ui.sortColumn = OperatorColumn.MAX;
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 10).startsWith("SOFT_MAX"), row(terminal, 10));
        assertTrue(row(terminal, 9).contains("MAXms▼"));
        ui.sortDescending = false;
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 10).startsWith("RMS_NORM+MUL"), row(terminal, 10));
        assertTrue(row(terminal, 9).contains("MAXms▲"));

        ui.filter = "norm";
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 10).startsWith("RMS_NORM+MUL"), row(terminal, 10));
        assertTrue(row(terminal, 11).isBlank(), row(terminal, 11));
        assertTrue(row(terminal, 23).startsWith("[/norm]"), row(terminal, 23));

        ui.filter = "";
        ui.rows = UiState.Rows.TENSOR_GROUPS;
        ui.sortColumn = OperatorColumn.SHARE;
        ui.sortDescending = true;
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 9).startsWith("TENSOR GROUP"), row(terminal, 9));
        assertTrue(row(terminal, 10).startsWith("blk.0 attention       3000   40.0"), row(terminal, 10));
        assertTrue(row(terminal, 11).startsWith("blk.0 ffn"), row(terminal, 11));
    }

    @Test
    void operatorLayerOffSaysSoInHeaderLanesAndTable() throws IOException {
        render(Theme.COLOUR, Fixtures.snapshot(LayerStatus.State.OFF), 80, 24);
        assertTrue(row(terminal, 1).contains("3:operator off"), row(terminal, 1));
        assertEquals(TextColor.ANSI.BLACK_BRIGHT, cell(terminal, row(terminal, 1).indexOf("3:operator"), 1)
                .getForegroundColor());
        assertTrue(row(terminal, 6).contains("no thread activity"), row(terminal, 6));
        int heading = find(terminal, "CALLS/s");
        assertTrue(row(terminal, heading + 1).contains("operator layer off: switched off live"),
                row(terminal, heading + 1));
        assertTrue(row(terminal, 2).endsWith("probes ~0.0% cpu (guess)"), row(terminal, 2));
    }

    @Test
    void latencyPlotDrawsTheSelectedRowsPercentiles() throws IOException {
        ui.body = BodyPanel.DETAILS;
        render(Theme.COLOUR, on(), 80, 24);
        int title = find(terminal, "LATENCY");
        assertTrue(row(terminal, title).contains("MUL_MAT  wall time per group, 4000 groups"), row(terminal, title));
        assertTrue(row(terminal, title + 1).startsWith(" p0            0.060 ms ########"), row(terminal, title + 1));
        int max = find(terminal, " p100 ");
        assertTrue(row(terminal, max).startsWith(" p100          0.410 ms " + "#".repeat(56)), row(terminal, max));
        // p50 at 0.120 of 0.410 ms: 16 of 56 columns.
        int p50 = find(terminal, " p50     ");
        assertEquals(" p50           0.120 ms " + "#".repeat(16), row(terminal, p50).stripTrailing());
        assertEquals(TextColor.ANSI.RED_BRIGHT, cell(terminal, 24, max).getForegroundColor());
        assertEquals(TextColor.ANSI.GREEN_BRIGHT, cell(terminal, 24, p50).getForegroundColor());
        int heading = find(terminal, "CALLS/s");
        assertTrue(heading < title && heading >= 9, "table stays above the plot");
    }

    @Test
    void monochromeKeepsClassesApartByCharacterAndMarksSelectionInReverse() throws IOException {
        render(Theme.MONOCHROME, on(), 80, 24);
        assertEquals("N.MA", row(terminal, 6).substring(76, 80));
        for (int col = 0; col < 80; col++) {
            for (int r = 0; r < 24; r++) {
                assertEquals(TextColor.ANSI.DEFAULT, cell(terminal, col, r).getForegroundColor(), col + "," + r);
                assertEquals(TextColor.ANSI.DEFAULT, cell(terminal, col, r).getBackgroundColor(), col + "," + r);
            }
        }
        assertTrue(cell(terminal, 0, 10).getModifiers().contains(SGR.REVERSE));
        assertFalse(cell(terminal, 0, 11).getModifiers().contains(SGR.REVERSE));
        assertTrue(cell(terminal, 0, 9).getModifiers().contains(SGR.REVERSE));
    }

    @Test
    void resizeRelaysOutEveryPanel() throws IOException {
        render(Theme.COLOUR, on(), 80, 24);
        render(Theme.COLOUR, on(), 120, 30);
        assertEquals(120, row(terminal, 0).length());
        assertTrue(row(terminal, 0).stripTrailing().endsWith("running  1.0s"), row(terminal, 0));
        assertEquals("N.MA", row(terminal, 6).substring(116, 120));
        assertTrue(row(terminal, 10).contains("ffn_up-3 [2816,1,1,1]"), row(terminal, 10));
        assertTrue(row(terminal, 29).startsWith("h help"), row(terminal, 29));
        render(Theme.COLOUR, on(), 30, 8);
        assertTrue(row(terminal, 0).startsWith("infertop: terminal too small"), row(terminal, 0));
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 9).startsWith("OP "), row(terminal, 9));
        assertTrue(row(terminal, 1).startsWith("backends CPU 98%"), row(terminal, 1));
    }

    @Test
    void endStateAndFreezeShowInTheHeader() throws IOException {
        ui.endState = RunState.EXITED;
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 0).contains("TARGET EXITED"), row(terminal, 0));
        assertEquals(TextColor.ANSI.RED_BRIGHT, cell(terminal, row(terminal, 0).indexOf("TARGET"), 0)
                .getForegroundColor());
        ui.endState = null;
        ui.frozen = true;
        render(Theme.COLOUR, on(), 80, 24);
        assertTrue(row(terminal, 0).contains("FROZEN"), row(terminal, 0));
    }

    /** Cells the clock samples named show the class's letter in lower case and ',' for wait; the op now '~'. */
    @Test
    void sampledLaneCellsAreLowerCase() throws IOException {
        Snapshot s = on();
        byte[] cells = new byte[200];
        java.util.Arrays.fill(cells, ThreadLane.IDLE);
        cells[196] = (byte) OpClass.NORM.ordinal();
        cells[197] = (byte) (OpClass.MATMUL.ordinal() + ThreadLane.SAMPLED);
        cells[198] = ThreadLane.SAMPLED_WAIT;
        cells[199] = (byte) (OpClass.MATMUL.ordinal() + ThreadLane.SAMPLED);
        ThreadLane lane = new ThreadLane(101, "~MUL_MAT", 50_000_000L,
                10_000_000_000L, cells);
        Snapshot sampled = s.withInterval(s.interval().withOperators(
                s.interval().operators().withSampled(s.interval().operators().sampled(), List.of(lane))));
        render(Theme.COLOUR, sampled, 80, 24);
        int row = find(terminal, "~MUL_MAT");
        assertTrue(row >= 0, Fixtures.screen(terminal));
        assertEquals("Nm,m", row(terminal, row).substring(76, 80), row(terminal, row));
    }

}
