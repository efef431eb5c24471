package dev.infertop.tui;

import dev.infertop.view.HelpPanel;
import dev.infertop.view.BodyPanel;
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

    /**
     * One body panel at a time: each panel's key opens it in place of the table (closing whichever was up), the
     * same key again returns to the table, and Esc returns to the table from any panel, with the help too.
     */
    @Test
    void eachBodyPanelOpensByItsKeyReplacesTheOtherAndEscClosesIt() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        java.util.Map<Character, BodyPanel> panels = new java.util.LinkedHashMap<>();
        panels.put('t', BodyPanel.THREAD_STATES);
        panels.put('c', BodyPanel.COUNTERS);
        panels.put('b', BodyPanel.BACKENDS);
        panels.put('r', BodyPanel.REQUESTS);
        panels.put('m', BodyPanel.MOE);
        panels.put('R', BodyPanel.ROOFLINE);
        BodyPanel previous = null;
        for (var panel : panels.entrySet()) {
            keys(panel.getKey());
            assertEquals(panel.getValue(), monitor.state().body, "key " + panel.getKey()
                    + (previous == null ? "" : " after " + previous));
            previous = panel.getValue();
        }
        for (var panel : panels.entrySet()) {
            keys(panel.getKey());
            keys(KeyType.Escape);
            assertEquals(BodyPanel.OPERATORS, monitor.state().body, "Esc closes " + panel.getValue());
            keys(panel.getKey(), panel.getKey());
            assertEquals(BodyPanel.OPERATORS, monitor.state().body, "its key again closes " + panel.getValue());
        }
        keys(KeyType.Enter);
        assertEquals(BodyPanel.DETAILS, monitor.state().body, "Enter: the table with the latency plot");
        keys('r', 'h');
        assertTrue(monitor.state().help);
        keys('h');
        assertEquals(BodyPanel.REQUESTS, monitor.state().body, "closing the help gives the panel back");
        keys('h', KeyType.Escape);
        assertFalse(monitor.state().help);
        assertEquals(BodyPanel.OPERATORS, monitor.state().body, "Esc closes the help and the panel under it");
    }

    @Test
    void keysDriveTheViewAndTheSession() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        assertTrue(row(terminal, 10).startsWith("MUL_MAT"), Fixtures.screen(terminal));

        keys('>');
        assertEquals(OperatorColumn.NOW, monitor.state().sortColumn);
        assertTrue(row(terminal, 9).contains("NOW%▼"), row(terminal, 9));
        assertTrue(row(terminal, 10).startsWith("MUL_MAT") && row(terminal, 10).contains(" 80.0 "),
                "most samples first: " + row(terminal, 10));
        keys('>');
        assertEquals(OperatorColumn.P50, monitor.state().sortColumn);
        assertTrue(row(terminal, 9).contains("P50ms▼"), row(terminal, 9));
        keys('<', '<', 'j');
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
        assertEquals(BodyPanel.COUNTERS, monitor.state().body);
        assertNotEquals(-1, find(terminal, " COUNTERS  layer"), "the counters panel replaces the table");
        keys('c');
        assertEquals(BodyPanel.OPERATORS, monitor.state().body);
        keys('4');
        assertEquals("toggle moe", calls.getLast());
        keys('m'); // the MoE panel in place of the table; Esc closes it
        assertEquals(BodyPanel.MOE, monitor.state().body);
        assertNotEquals(-1, find(terminal, "MoE experts"), Fixtures.screen(terminal));
        keys(KeyType.Escape);
        assertEquals(BodyPanel.OPERATORS, monitor.state().body);
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

    /** The help's entries whose lines all show on this screen: keys column (16) then the description, wrapped. */
    private List<String> wholeHelpEntries() {
        List<String> whole = new ArrayList<>();
        StringBuilder current = null;
        for (int r = 1; r <= 22; r++) {
            String row = row(terminal, r);
            boolean marker = row.startsWith(" more ");
            boolean starts = !marker && !row.substring(0, 16).isBlank();
            if (current != null && (starts || marker || row.isBlank())) {
                whole.add(current.toString());
                current = null;
            }
            if (marker || row.isBlank()) {
                break;
            }
            String text = row.substring(16).stripTrailing();
            if (starts) {
                current = new StringBuilder(text);
            } else if (current != null) {
                current.append(' ').append(text); // a continuation: its entry started on this screen
            }
        }
        if (current != null && row(terminal, 23).startsWith("h help") && !row(terminal, 22).startsWith(" more ")) {
            whole.add(current.toString());
        }
        return whole;
    }

    @Test
    void helpFitsEightyByTwentyFour() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        keys('?');
        // More actions than 22 rows: the help scrolls; every description is shown whole (wrapped, never cut)
        // on some screen, paging down from the top.
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int page = 0; page < 10; page++) {
            seen.addAll(wholeHelpEntries());
            if (!row(terminal, 22).contains("\u25bc")) {
                break; // the last page: nothing below
            }
            keys(KeyType.PageDown);
        }
        for (Action action : Action.values()) {
            if (action.layer() != null) {
                continue; // the layer toggles share one line, checked below
            }
            assertTrue(seen.contains(action.description()), action + " not shown whole: " + seen);
        }
        assertTrue(seen.contains(LiveMonitor.TOGGLE_HELP + "token graph operator moe sched counters"), seen.toString());
        for (int r = 0; r < 24; r++) {
            assertEquals(80, row(terminal, r).length());
        }
    }

    @Test
    void helpScrollsWithTheMovementKeysAndSaysWhatIsBelow() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        String selected = monitor.state().selectedName;
        keys('h');
        int lines = 0;
        for (HelpPanel.Entry entry : LiveMonitor.helpEntries(KeyTable.load())) {
            lines += HelpPanel.wrap(entry.description(), 80 - 16 - 1).size();
        }
        assertTrue(lines > 21, "more lines than rows: " + lines);
        // rows 1..21 show lines 1..21, row 22 the marker, row 23 the footer
        assertEquals(" more \u25bc lines 1-21 of " + lines + "  Up/Down PgUp/PgDn Home/End scroll, Esc closes",
                row(terminal, 22).stripTrailing());
        String first = row(terminal, 1);
        String second = row(terminal, 2);
        keys(KeyType.ArrowDown);
        assertEquals(second, row(terminal, 1), "one line down");
        assertTrue(row(terminal, 22).startsWith(" more \u25b2\u25bc lines 2-22 of " + lines), row(terminal, 22));
        keys(KeyType.End);
        assertTrue(row(terminal, 22).startsWith(" more \u25b2 lines " + (lines - 20) + "-" + lines + " of " + lines),
                row(terminal, 22));
        keys(KeyType.ArrowDown); // already at the end: stays
        assertTrue(row(terminal, 22).startsWith(" more \u25b2 lines " + (lines - 20) + "-"), row(terminal, 22));
        keys(KeyType.ArrowUp);
        assertTrue(row(terminal, 22).startsWith(" more \u25b2\u25bc lines " + (lines - 21) + "-"), row(terminal, 22));
        keys(KeyType.Home);
        assertEquals(first, row(terminal, 1));
        keys(KeyType.PageDown, KeyType.PageUp);
        assertEquals(first, row(terminal, 1), "a page down and up again");
        assertEquals(selected, monitor.state().selectedName, "the table's selection did not move");
        keys(KeyType.End, KeyType.Escape, 'h');
        assertEquals(first, row(terminal, 1), "the help opens at its top again");
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
