package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A BLAS build's snapshot: CPU graphs (ops from the operator layer) and BLAS graphs (MUL_MAT counted per
 * graph, timed). The backends panel (key b) replaces the operator table; JSON carries the same split.
 */
class BackendsPanelTest {
    private DefaultVirtualTerminal terminal;
    private TerminalScreen screen;
    private final UiState ui = new UiState();

    static Snapshot blasSnapshot() {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<BackendTotals> backends = List.of(new BackendTotals("CPU", 70, 43_000, 500_000_000L),
                new BackendTotals("BLAS", 20, 160, 250_000_000L));
        List<BackendOps> blas = List.of(new BackendOps("BLAS", 20, 250_000_000L, List.of(
                new BackendOps.Op("MUL_MAT", 140, 250_000_000L, true),
                new BackendOps.Op("VIEW", 20, 0, false))));
        return s.withFigures(f -> f.withBackends(backends, blas));
    }

    private void render(Snapshot snapshot) throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(80, 24));
        screen = new TerminalScreen(terminal);
        screen.startScreen();
        new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), snapshot, ui);
        screen.refresh(Screen.RefreshType.DELTA);
    }

    @AfterEach
    void stop() throws IOException {
        if (screen != null) {
            screen.stopScreen();
        }
    }

    private int findAfter(int from, String text) {
        for (int row = from + 1; row < terminal.getTerminalSize().getRows(); row++) {
            if (row(terminal, row).startsWith(text)) {
                return row;
            }
        }
        return -1;
    }

    @Test
    void panelShowsEachBackendWithItsOps() throws IOException {
        ui.body = BodyPanel.BACKENDS;
        render(blasSnapshot());
        int heading = find(terminal, "BACKEND / OP");
        assertTrue(heading > 0, "panel heading");
        int cpu = findAfter(heading, " CPU ");
        int blas = findAfter(heading, " BLAS ");
        assertTrue(cpu > heading && blas > cpu, "CPU then BLAS rows");
        // CPU: 70 graphs, 500 ms busy = 50 % of the 1 s interval; its ops from the operator layer
        assertTrue(row(terminal, cpu).matches(" CPU\\s+70\\s+500\\s+50\\.0%\\s+43000\\s*"), row(terminal, cpu));
        assertTrue(row(terminal, cpu + 1).trim().startsWith("MUL_MAT"), row(terminal, cpu + 1));
        // BLAS: 20 graphs, 250 ms = 25 %; MUL_MAT timed, all of the busy time; VIEW counted, no time
        assertTrue(row(terminal, blas).matches(" BLAS\\s+20\\s+250\\s+25\\.0%\\s+160\\s*"), row(terminal, blas));
        assertTrue(row(terminal, blas + 1).matches("\\s+MUL_MAT\\s+250\\s+100\\.0%\\s+140\\s*"), row(terminal, blas + 1));
        assertTrue(row(terminal, blas + 2).matches("\\s+VIEW\\s+-\\s+-\\s+20\\s*"), row(terminal, blas + 2));
        assertEquals(-1, find(terminal, "LAST SHAPE"), "the operator table is replaced");
    }

    @Test
    void withoutTheKeyTheOperatorTableStays() throws IOException {
        render(blasSnapshot());
        assertEquals(-1, find(terminal, "BACKEND / OP"));
    }

    @Test
    void jsonCarriesOpsPerBackend() throws IOException {
        JsonNode json = new ObjectMapper().readTree(JsonLinesView.toJson(blasSnapshot()));
        JsonNode blas = json.get("backends").get("BLAS");
        assertEquals(20, blas.get("graphs").asLong());
        assertEquals(250.0, blas.get("busy_ms").asDouble());
        assertEquals(140, blas.get("ops").get("MUL_MAT").get("nodes").asLong());
        assertEquals(250.0, blas.get("ops").get("MUL_MAT").get("ms").asDouble());
        assertTrue(blas.get("ops").get("VIEW").get("ms") == null, "no time where none is measured");
        JsonNode cpu = json.get("backends").get("CPU");
        assertEquals(70, cpu.get("graphs").asLong());
        assertEquals(4000, cpu.get("ops").get("MUL_MAT").get("nodes").asLong());
        assertEquals(600.0, cpu.get("ops").get("MUL_MAT").get("ms").asDouble());
    }
}
