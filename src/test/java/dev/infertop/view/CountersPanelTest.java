package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The counters panel (key c) and the JSON "counters" object, from fixed snapshots. */
class CountersPanelTest {
    private DefaultVirtualTerminal terminal;
    private final UiState ui = new UiState();

    static final String NO_PMU = "no hardware PMU: the kernel refuses cache-misses, instructions, cycles, "
            + "cache-references (perf_event_open: No such file or directory), so this machine (a VM?) has no "
            + "hardware counters; software events still work: --counters software";

    /** refills, instructions, cycles: MUL_MAT 12 refills/1k instr (memory-bound), ADD IPC 2 (compute-bound). */
    static CounterTotals hardware() {
        OpCounters matmul = new OpCounters("MUL_MAT", 4000, 12, 7, List.of(1_200_000L, 100_000_000L, 200_000_000L),
                600_000_000L, 600_000_000L);
        OpCounters add = new OpCounters("ADD", 1000, 0, 0, List.of(1_000L, 10_000_000L, 5_000_000L), 50_000_000L,
                40_000_000L);
        return new CounterTotals("x86_64", List.of("cache-misses", "instructions", "cycles"), 64, 0, 1, 2,
                List.of(matmul, add), List.of(1_201_000L, 110_000_000L, 205_000_000L), 5000, 12, 7, 0, 650_000_000L,
                List.of(10e6, 76.864e6));
    }

    static Snapshot with(LayerStatus counters, CounterTotals totals, boolean isFinal) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<LayerStatus> layers = new ArrayList<>(s.layers());
        layers.add(counters);
        return s.withState(isFinal ? RunState.EXITED : RunState.RUNNING).withLayers(layers)
                .withFigures(f -> f.withCounters(totals));
    }

    private void render(Snapshot snapshot) throws IOException {
        ui.body = BodyPanel.COUNTERS;
        terminal = Fixtures.drawn(snapshot, ui, 120, 24);
    }

    private int rowStarting(String prefix) {
        return Fixtures.rowStarting(terminal, prefix);
    }

    @Test
    void withoutAPmuThePanelSaysSoPlainly() throws IOException {
        render(with(new LayerStatus(Layer.COUNTERS, LayerStatus.State.UNAVAILABLE, NO_PMU, List.of()),
                CounterTotals.EMPTY, false));
        int top = rowStarting(" COUNTERS");
        assertEquals(" COUNTERS  layer unavailable", row(terminal, top).stripTrailing());
        assertTrue(row(terminal, top + 1).startsWith(" no hardware PMU: the kernel refuses cache-misses"),
                row(terminal, top + 1));
        assertTrue(row(terminal, top + 2).startsWith(" memory-bound: >= 5.0 refills/1k instr; compute-bound: IPC >= 1.00"),
                row(terminal, top + 2));
        // The header still shows every other layer working.
        assertTrue(row(terminal, 1).contains("3:operator on"), row(terminal, 1));
    }

    @Test
    void perOpIpcRefillsBandwidthAndVerdict() throws IOException {
        render(with(new LayerStatus(Layer.COUNTERS, LayerStatus.State.ON, "", List.of()), hardware(), false));
        int top = rowStarting(" COUNTERS");
        // its cost: (5000 + 12) groups x 3 reads x 0.15 us (assumed) over the 1 s interval = 0.23 %
        assertEquals(" COUNTERS  layer on  set x86_64: cache-misses, instructions, cycles  line 64 B  reads ~0.23% cpu (est.)",
                row(terminal, top).stripTrailing());
        // 1,201,000 refills x 64 B over the 1 s interval = 76.864 MB/s
        assertTrue(row(terminal, top + 2).startsWith(" L3 refill     76.9M/s "), row(terminal, top + 2));
        int heading = rowStarting("OP ");
        assertEquals("OP                  GROUPS  MIGR SWTCH    IPC  REF/1kI     L3 B/s VERDICT       cache-misses instructions"
                + "       cycles", row(terminal, heading).stripTrailing());

        // MUL_MAT: IPC 0.5, 12 refills per 1k instructions, 1.2M x 64 B over 0.6 s = 128 MB/s
        assertEquals("MUL_MAT               4000    12     7   0.50     12.0     128.0M memory-bound       1200000      100.00M"
                + "      200.00M", row(terminal, heading + 1).stripTrailing());
        // ADD: IPC 2.0, 0.1 refills per 1k instructions, 1000 x 64 B over 40 ms = 1.6 MB/s
        assertEquals("ADD                   1000     0     0   2.00      0.1       1.6M compute-bound         1000       10.00M"
                + "      5000000", row(terminal, heading + 2).stripTrailing());
    }

    @Test
    void aSetWithoutRefillsSaysSoOnAFullRow() throws IOException {
        OpCounters matmul = new OpCounters("MUL_MAT", 10, 0, 0, List.of(5_000_000L), 5_000_000L, 4_000_000L);
        CounterTotals software = new CounterTotals("software", List.of("task-clock"), 64, -1, -1, -1, List.of(matmul),
                List.of(5_000_000L), 10, 0, 0, 0, 5_000_000L, List.of(0.0));
        render(with(new LayerStatus(Layer.COUNTERS, LayerStatus.State.ON, "", List.of()), software, false));
        int top = rowStarting(" COUNTERS");
        assertEquals(" L3 refill   (no refills event in this set)", row(terminal, top + 2).stripTrailing(),
                "nothing of the table underneath shows through");
        assertEquals("MUL_MAT                 10     0     0      -        -          - n/a                5000000",
                row(terminal, rowStarting("OP ") + 1).stripTrailing());
    }

    @Test
    void jsonCarriesTheStatusOrThePerOpFigures() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode noPmu = mapper.readTree(JsonLinesView.toJson(with(new LayerStatus(Layer.COUNTERS,
                LayerStatus.State.UNAVAILABLE, NO_PMU, List.of()), CounterTotals.EMPTY, false))).get("counters");
        assertEquals("unavailable", noPmu.get("state").asText());
        assertEquals(NO_PMU, noPmu.get("status").asText());
        assertEquals(5.0, noPmu.get("thresholds").get("memory_bound_refills_per_1k_instructions").asDouble());
        assertEquals(1.0, noPmu.get("thresholds").get("compute_bound_ipc").asDouble());
        assertFalse(noPmu.has("ops"));

        JsonNode on = mapper.readTree(JsonLinesView.toJson(with(new LayerStatus(Layer.COUNTERS,
                LayerStatus.State.ON, "", List.of()), hardware(), true))).get("counters");
        assertEquals("x86_64", on.get("set").asText());
        assertEquals(5000, on.get("groups").asLong());
        assertEquals(12, on.get("migrated_groups").asLong());
        assertEquals(7, on.get("switched_groups").asLong());
        assertEquals(7, on.get("ops").get("MUL_MAT").get("switched_groups").asLong());
        assertEquals(110_000_000L, on.get("values").get("instructions").asLong());
        // final object: over the 7 s run, 1,201,000 x 64 B / 7 s
        assertEquals(Math.round(1_201_000 * 64 / 7.0), on.get("refill_bytes_per_s").asLong());
        JsonNode matmul = on.get("ops").get("MUL_MAT");
        assertEquals(0.5, matmul.get("ipc").asDouble());
        assertEquals(12.0, matmul.get("refills_per_1k_instructions").asDouble());
        assertEquals(128_000_000L, matmul.get("refill_bytes_per_s").asLong());
        assertEquals("memory-bound", matmul.get("verdict").asText());
        assertEquals("compute-bound", on.get("ops").get("ADD").get("verdict").asText());
        assertTrue(on.get("est_cost_cpu_fraction").asDouble() > 0);

        Snapshot off = with(new LayerStatus(Layer.COUNTERS, LayerStatus.State.OFF, "", List.of()), CounterTotals.EMPTY, false);
        assertFalse(mapper.readTree(JsonLinesView.toJson(off)).has("counters"), "no counters object while off");
    }
}
