package dev.infertop.view;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The thread-states panel (key t) drawn by the whole screen at 100x30 from the fixture's sched figures: it
 * replaces the operator table under the header and lanes, and the header names the worst interferer.
 */
class SchedPanelTest {
    private DefaultVirtualTerminal terminal;
    private TerminalScreen screen;
    private final UiState ui = new UiState();

    private void render(Snapshot snapshot) throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(100, 30));
        screen = new TerminalScreen(terminal);
        screen.startScreen();
        new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3", "5"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help").draw(screen.newTextGraphics(), snapshot, ui);
        screen.refresh(Screen.RefreshType.DELTA);
    }

    @AfterEach
    void stop() throws IOException {
        screen.stopScreen();
    }

    private static Snapshot withSched(LayerStatus.State state, String reason) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<LayerStatus> layers = new ArrayList<>(s.layers());
        layers.add(new LayerStatus(Layer.SCHED, state, reason, List.of()));
        return s.withLayers(layers).withFigures(f -> f.withSched(Fixtures.sched()));
    }

    private int rowStartingWith(String text) {
        for (int r = 0; r < terminal.getTerminalSize().getRows(); r++) {
            if (row(terminal, r).startsWith(text)) {
                return r;
            }
        }
        throw new AssertionError("no row starts with '" + text + "':\n" + Fixtures.screen(terminal));
    }

    @Test
    void panelShowsThreadStatesCulpritsAndOffCpuByOp() throws IOException {
        ui.body = BodyPanel.THREAD_STATES;
        render(withSched(LayerStatus.State.ON, ""));
        // Span 1 s: 1300 records, 20 000 hits, 20 000 x 300 ns = 0.6 % of a core.
        int heading = rowStartingWith("THREAD STATES");
        assertTrue(row(terminal, heading).contains("sched 1300 rec/s, 20000 hits/s, ~0.60% cpu (guess)"),
                row(terminal, heading));
        assertEquals("  TID        RUN%  WAIT% SLEEP%  SWITCHES PREEMPTED", row(terminal, heading + 1).stripTrailing());
        // 101: 600/300/100 ms of 1000 ms.
        assertEquals("  101        60.0   30.0   10.0        50        30", row(terminal, heading + 2).stripTrailing());
        assertEquals("  102        80.0   10.0   10.0        40         5", row(terminal, heading + 3).stripTrailing());
        // The hog ran 330 ms of the 400 ms the threads waited: 82.5 %.
        assertEquals("  777      hog                         330.0    82.5%", row(terminal, heading + 5).stripTrailing());
        assertEquals("  4242     llama-bench (self)            5.0     1.3%", row(terminal, heading + 7).stripTrailing());
        int byOp = rowStartingWith("  OFF-CPU BY OP");
        assertEquals("  MUL_MAT                           250.0         20.0", row(terminal, byOp + 1).stripTrailing());
        // The header names the culprit too.
        assertTrue(row(terminal, 4).contains("cpu thief hog (777) 83% of wait"), row(terminal, 4));
    }

    @Test
    void panelSaysWhyWhenTheLayerIsOff() throws IOException {
        ui.body = BodyPanel.THREAD_STATES;
        render(withSched(LayerStatus.State.OFF, "switched off live"));
        int heading = rowStartingWith("THREAD STATES");
        assertEquals("  sched layer off: switched off live", row(terminal, heading + 1).stripTrailing());
    }

    @Test
    void withoutThePanelTheOperatorTableStays() throws IOException {
        render(withSched(LayerStatus.State.ON, ""));
        assertTrue(Fixtures.screen(terminal).contains("MUL_MAT"));
        assertTrue(!Fixtures.screen(terminal).contains("THREAD STATES"));
    }
}
