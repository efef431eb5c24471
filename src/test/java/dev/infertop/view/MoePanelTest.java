package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import dev.infertop.model.BackendOps;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The MoE panel drawn into Lanterna's virtual terminal in monochrome (NO_COLOR) and read back. */
public class MoePanelTest {
    private DefaultVirtualTerminal terminal;
    private final UiState ui = new UiState();

    private void render(Snapshot snapshot) throws IOException {
        ui.body = BodyPanel.MOE;
        terminal = Fixtures.drawn(snapshot, ui, 100, 30);
    }

    public static MoeTotals moe() {
        // 2 layers x 4 experts, 2 per token. Decode window: layer 0 hottest expert 0 (8 of 8 rows), layer 1 expert 1.
        long[][] decode = {{8, 4, 3, 1}, {1, 8, 0, 7}};
        long[][] prefill = {{16, 16, 16, 16}, {0, 0, 0, 0}};
        List<MoeTotals.ExpertStats> experts = List.of(
                new MoeTotals.ExpertStats(0, 20, 0.125, 0.5, 12.5, 1.25, 0),
                new MoeTotals.ExpertStats(1, 15, 0.130, 0.6, 9.0, 2.0, 3),
                new MoeTotals.ExpertStats(2, 5, 0.120, 0.4, 2.5, Double.NaN, 7),
                new MoeTotals.ExpertStats(3, 0, Double.NaN, Double.NaN, 0, Double.NaN, -1));
        return new MoeTotals(true, 10, 2, prefill, decode, new long[] {32, 0}, new long[] {8, 8}, prefill, decode,
                new long[] {32, 0}, new long[] {8, 8}, new long[] {5, 5}, experts, new double[] {0.5, 0.75}, 16384,
                12, 1, 88, 3, 0, 4096, 0);
    }

    private static Snapshot with(MoeTotals moe, LayerStatus.State moeState, String reason) {
        Snapshot base = Fixtures.snapshot(LayerStatus.State.ON);
        List<LayerStatus> layers = new ArrayList<>(base.layers());
        layers.add(new LayerStatus(Layer.MOE, moeState, reason, List.of()));
        return base.withLayers(layers).withMoe(moe);
    }

    @Test
    void heatmapShadesReadWithoutColour() throws IOException {
        render(with(moe(), LayerStatus.State.ON, ""));
        int title = find(terminal, "MoE experts");
        assertTrue(title > 0, Fixtures.screen(terminal));
        String titleRow = row(terminal, title);
        assertEquals("MoE experts  window: last 10 intervals  2 of 4 experts per token  imbalance CV 0.63",
                titleRow.stripTrailing());
        assertEquals("ids of 12 nodes read (4096 B, bound 16384 B/node): 1 truncated, 3 graphs without ids, 0 failed",
                row(terminal, title + 1).stripTrailing());
        title++;
        assertTrue(row(terminal, title + 1).startsWith("LAYER DECODE   PREFILL      CV"), row(terminal, title + 1));
        // Two characters per expert. Decode max is 8: 8 → '@', 4 → '=' (4/8: level 4), 3 → '-' (ceil 3), 1 → '.'.
        // Prefill max 16: every expert equal → all '@'. Layer 1 prefill: nothing → blanks.
        assertEquals("    0 @@==--.. @@@@@@@@   0.50", row(terminal, title + 2).stripTrailing());
        assertEquals("    1 ..@@  ##            0.75", row(terminal, title + 3).stripTrailing());
        assertTrue(row(terminal, title + 4).contains("shade \" .:-=+*#@\""), row(terminal, title + 4));
        assertTrue(row(terminal, title + 5).startsWith("EXPERT  TOKEN%   NODES  NODE p50ms"), row(terminal, title + 5));
        // Expert 0: (8 + 1 + 16 + 0) selections over 48 window tokens = 52.1 %; expert 3: (1 + 7 + 16) / 48 = 50 %.
        assertEquals("     0    52.1      20       0.125   0.50      12.5        1.3          0",
                row(terminal, title + 6).stripTrailing());
        assertEquals("     3    50.0       0           -      -       0.0          -      never",
                row(terminal, title + 9).stripTrailing());
    }

    @Test
    void saysWhyWhenTheLayerCannotRun() throws IOException {
        render(with(MoeTotals.EMPTY, LayerStatus.State.UNAVAILABLE, "needs the operator layer, which is off"));
        int title = find(terminal, "MoE experts");
        assertEquals("moe layer unavailable: needs the operator layer, which is off", row(terminal, title + 2).stripTrailing());
    }

    @Test
    void levelsAreEighthsOfTheHottestCell() {
        assertEquals(0, MoePanel.level(0, 8));
        assertEquals(1, MoePanel.level(1, 8));
        assertEquals(1, MoePanel.level(1, 1000)); // any activation shows
        assertEquals(4, MoePanel.level(4, 8));
        assertEquals(8, MoePanel.level(8, 8));
        assertEquals("@@  ..", MoePanel.shades(new long[][] {{8, 0, 1}}, 0, 2, 8, 3));
    }

    @Test
    void expertMatmulsOnADeviceAreCountedNotHidden() throws Exception {
        assertEquals(null, MoePanel.onDevices(java.util.Map.of(), moe()));
        assertEquals("MUL_MAT_ID nodes computed on devices: 12 on Vulkan; their ids are read only where the "
                + "scheduler copies them back (0 reads)", MoePanel.onDevices(java.util.Map.of("Vulkan", 12L), moe()));
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON).withMoe(moe())
                .withFigures(f -> f.withBackendOps(java.util.List.of(new BackendOps("Vulkan", 4,
                        1_000_000, java.util.List.of(new BackendOps.Op("MUL_MAT_ID", 12, 0, false),
                        new BackendOps.Op("MUL_MAT", 8, 0, false))))));
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                JsonLinesView.toJson(s));
        assertEquals(12, json.get("moe").get("nodes_on_devices").get("Vulkan").asLong(), json.get("moe").toString());
        assertEquals(1, json.get("moe").get("nodes_on_devices").size());
    }
}
