package dev.infertop.tui;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import dev.infertop.view.OperatorColumn;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The loop driven through a virtual terminal: keys in, screen out, controls called. */
class LiveMonitorTest {
    private final List<String> calls = new ArrayList<>();
    private DefaultVirtualTerminal terminal;
    private TerminalSession session;
    private LiveView view;
    private LiveMonitor monitor;

    @BeforeEach
    void start() throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(80, 24));
        session = TerminalSession.on(terminal);
        view = new LiveView();
        monitor = new LiveMonitor(session, view, KeyTable.load(), Theme.COLOUR, new LiveMonitor.Controls() {
            @Override
            public void quit() {
                calls.add("quit");
            }

            @Override
            public void toggle(Layer layer) {
                calls.add("toggle " + layer.id());
            }

            @Override
            public void setIntervalSeconds(double seconds) {
                calls.add("interval " + seconds);
            }
        }, 1.0);
    }

    @AfterEach
    void stop() {
        session.close();
    }

    private void keys(Object... keys) throws IOException {
        for (Object key : keys) {
            terminal.addInput(key instanceof Character c ? new KeyStroke(c, false, false)
                    : new KeyStroke((KeyType) key));
        }
        monitor.step();
    }

    @Test
    void keysDriveTheViewAndTheSession() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        assertTrue(row(terminal, 10).startsWith("MUL_MAT"), Fixtures.screen(terminal));

        keys('>');
        assertEquals(OperatorColumn.P50, monitor.state().sortColumn);
        assertTrue(row(terminal, 9).contains("P50ms▼"), row(terminal, 9));
        keys('<', 'j');
        assertEquals(OperatorColumn.SHARE, monitor.state().sortColumn);
        assertEquals("RMS_NORM+MUL", monitor.state().selectedName);

        keys('/', 's', 'o', 'f', 't', KeyType.Enter);
        assertEquals("soft", monitor.state().filter);
        assertFalse(monitor.state().editingFilter);
        assertTrue(row(terminal, 10).startsWith("SOFT_MAX"), row(terminal, 10));
        assertTrue(row(terminal, 11).isBlank());
        keys(KeyType.Escape);
        assertEquals("", monitor.state().filter);

        keys('g');
        assertEquals(UiState.Rows.TENSOR_GROUPS, monitor.state().rows);
        assertTrue(row(terminal, 10).startsWith("blk.0 attention"), row(terminal, 10));

        keys('3');
        assertEquals(List.of("toggle operator"), calls);
        assertTrue(row(terminal, 23).contains("operator layer: switching off"), row(terminal, 23));

        keys('6');
        assertEquals("toggle counters", calls.getLast());
        keys('c');
        assertTrue(monitor.state().countersPanel);
        assertNotEquals(-1, find(terminal, " COUNTERS  layer"), "the counters panel replaces the table");
        keys('c');
        assertFalse(monitor.state().countersPanel);
        keys('4');
        assertEquals("toggle moe", calls.getLast());
        keys('m'); // the MoE panel in place of the table; Esc closes it
        assertTrue(monitor.state().moe);
        assertNotEquals(-1, find(terminal, "MoE experts"), Fixtures.screen(terminal));
        keys(KeyType.Escape);
        assertFalse(monitor.state().moe);
        assertEquals(-1, find(terminal, "MoE experts"));

        keys('+');
        assertEquals("interval 0.5", calls.getLast());
        keys('-', '-');
        assertEquals("interval 2.0", calls.getLast());

        keys('h');
        assertTrue(row(terminal, 0).startsWith(" HELP"), row(terminal, 0));
        assertNotEquals(-1, find(terminal, "rows by op type / by tensor"));
        keys(KeyType.Escape);
        assertTrue(row(terminal, 0).startsWith("infertop"), row(terminal, 0));

        keys('h');
        terminal.addInput(new KeyStroke('q', false, true)); // Esc then q, read together as Alt+q
        monitor.step();
        assertEquals("quit", calls.getLast());
        assertFalse(monitor.state().help);
        assertTrue(monitor.quitting());
    }

    @Test
    void freezeKeepsTheScreenWhileSnapshotsArrive() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        keys(' ');
        view.show(Fixtures.snapshot(LayerStatus.State.OFF));
        monitor.step();
        assertTrue(row(terminal, 1).contains("3:operator on"), row(terminal, 1));
        assertTrue(row(terminal, 0).contains("FROZEN"));
        keys(' ');
        assertTrue(row(terminal, 1).contains("3:operator off"), row(terminal, 1));
    }

    @Test
    void helpFitsEightyByTwentyFour() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        keys('?');
        // More actions than 22 rows: two columns, each description cut to its column (28 characters).
        for (Action action : Action.values()) {
            if (action.layer() != null) {
                continue; // the layer toggles share one line, checked below
            }
            String text = action.description().substring(0, Math.min(28, action.description().length()));
            assertNotEquals(-1, find(terminal, text), action + "\n" + Fixtures.screen(terminal));
        }
        String toggles = LiveMonitor.TOGGLE_HELP + "token graph operator moe sched counters";
        assertNotEquals(-1, find(terminal, toggles.substring(0, 28)), Fixtures.screen(terminal));
    }

    @Test
    void resizeIsPickedUpByTheLoop() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        terminal.setTerminalSize(new TerminalSize(100, 30));
        monitor.step();
        assertEquals(100, row(terminal, 0).length());
        assertTrue(row(terminal, 29).startsWith("h help"), row(terminal, 29));
    }
}
