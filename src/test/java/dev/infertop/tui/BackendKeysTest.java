package dev.infertop.tui;

import dev.infertop.view.BodyPanel;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import dev.infertop.view.Theme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keys b (backends panel) and d (write the DAG) through the loop and the shipped key table. */
class BackendKeysTest {
    private DefaultVirtualTerminal terminal;
    private TerminalSession session;
    private LiveView view;
    private LiveMonitor monitor;
    private int dagWrites;

    @BeforeEach
    void start() throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(80, 24));
        session = TerminalSession.on(terminal);
        view = new LiveView();
        monitor = new LiveMonitor(session, view, KeyTable.load(), Theme.COLOUR, new LiveMonitor.Controls() {
            @Override
            public void quit() {}

            @Override
            public void toggle(Layer layer) {}

            @Override
            public void setIntervalSeconds(double seconds) {}

            @Override
            public String writeDag() {
                dagWrites++;
                return "DAG written to infertop-dag-4242-120000.dot (812 nodes)";
            }
        }, 1.0);
    }

    @AfterEach
    void stop() {
        session.close();
    }

    private void key(char c) throws IOException {
        terminal.addInput(new KeyStroke(c, false, false));
        monitor.step();
    }

    @Test
    void bOpensAndClosesTheBackendsPanel() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        assertEquals(-1, find(terminal, "BACKEND / OP"));
        key('b');
        assertEquals(BodyPanel.BACKENDS, monitor.state().body);
        assertNotEquals(-1, find(terminal, "BACKEND / OP"), Fixtures.screen(terminal));
        key('b');
        assertEquals(BodyPanel.OPERATORS, monitor.state().body);
        assertEquals(-1, find(terminal, "BACKEND / OP"));
        key('b');
        terminal.addInput(new KeyStroke(KeyType.Escape));
        monitor.step();
        assertEquals(BodyPanel.OPERATORS, monitor.state().body, "Esc closes it too");
    }

    @Test
    void dWritesTheDagAndSaysSoInTheStatusLine() throws IOException {
        view.show(Fixtures.snapshot(LayerStatus.State.ON));
        monitor.step();
        key('d');
        assertEquals(1, dagWrites);
        assertTrue(row(terminal, 23).contains("DAG written to infertop-dag-4242-120000.dot"), row(terminal, 23));
    }
}
