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
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeTotals;
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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MoE layer in a snapshot: report.html's heatmap (cells, titles, legend), imbalance and per-expert tables;
 * the report command's "across experts" figures (JSON and text) from summary.json's moe object; replay's MoE
 * panel drawing the same as the live one; a run without the layer says it was not recorded.
 */
class MoeSnapshotTest {
    @TempDir
    Path temp;

    /**
     * 2 layers × 4 experts, 2 per token. Decode: 8 tokens per layer, layer 0 sends all 8 to expert 0, layer 1
     * all 8 to expert 1. Prefill: 32 tokens in layer 0 spread evenly (16 each: 50 %), none in layer 1.
     */
    static MoeTotals moe() {
        long[][] decode = {{8, 4, 3, 1}, {1, 8, 0, 7}};
        long[][] prefill = {{16, 16, 16, 16}, {0, 0, 0, 0}};
        List<MoeTotals.ExpertStats> experts = List.of(
                new MoeTotals.ExpertStats(0, 20, 0.125, 0.5, 12.5, 1.25, 0),
                new MoeTotals.ExpertStats(1, 15, 0.13, 0.6, 9.0, 2.0, 3),
                new MoeTotals.ExpertStats(2, 5, 0.12, 0.4, 2.5, Double.NaN, 7),
                new MoeTotals.ExpertStats(3, 0, Double.NaN, Double.NaN, 0, Double.NaN, -1));
        return new MoeTotals(true, 10, 2, prefill, decode, new long[] {32, 0}, new long[] {8, 8}, prefill, decode,
                new long[] {32, 0}, new long[] {8, 8}, new long[] {5, 5}, experts, new double[] {0.5, 0.75}, 16384,
                12, 1, 88, 3, 0, 4096, 0);
    }

    private static SnapshotContent content(LayerStatus.State state, MoeTotals moe) {
        SnapshotContent base = SnapshotFixtures.content();
        List<LayerStatus> layers = new ArrayList<>(base.last().layers());
        layers.add(new LayerStatus(Layer.MOE, state, "", List.of()));
        Snapshot last = base.last().withLayers(layers).withMoe(moe);
        return new SnapshotContent(last, base.window(), base.tensorNames(), base.histograms(), base.ticks(),
                base.trigger(), base.createdEpochMs(), base.infertopVersion(), base.threadNames(), null);
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
    void reportPageHasTheHeatmapDecodeAndPrefillApartWithTitlesTextAndLegend() {
        String moe = section(HtmlReportWriter.html(content(LayerStatus.State.ON, moe())), "Expert activations");
        String decode = moe.substring(moe.indexOf("data-phase=\"decode\""), moe.indexOf("data-phase=\"prefill\""));
        String prefill = moe.substring(moe.indexOf("data-phase=\"prefill\""), moe.indexOf("class=\"legend\""));
        // 4 experts: 24 px cells from x 40; 2 layers: 24 px rows from y 30. One scale for both maps: max 100 %.
        assertTrue(decode.contains("<rect x=\"40\" y=\"30\" width=\"24\" height=\"24\" fill=\"#08306b\" stroke=\"#fff\" "
                + "stroke-width=\"0.5\"><title>layer 0 expert 0 decode: 8 of 8 tokens (100.0%)</title></rect>"
                + "<text x=\"52\" y=\"45\" text-anchor=\"middle\" style=\"fill:#fff;font-size:9px\">100</text>"), decode);
        assertTrue(decode.contains("<title>layer 1 expert 2 decode: 0 of 8 tokens (0.0%)</title>"), decode);
        assertTrue(decode.contains("<text x=\"0\" y=\"12\">decode: 16 tokens (layer rows)"), decode);
        assertEquals(8, count(decode, "<rect "), "layer x expert cells");
        // Prefill 16 of 32 = 50 %: half way to dark blue, dark text; layer 1 computed no prefill token.
        assertTrue(prefill.contains("<rect x=\"64\" y=\"30\" width=\"24\" height=\"24\" fill=\"#8498b5\" stroke=\"#fff\" "
                + "stroke-width=\"0.5\"><title>layer 0 expert 1 prefill: 16 of 32 tokens (50.0%)</title></rect>"
                + "<text x=\"76\" y=\"45\" text-anchor=\"middle\" style=\"fill:#000;font-size:9px\">50</text>"), prefill);
        assertTrue(prefill.contains("fill=\"#ffffff\" stroke=\"#fff\" stroke-width=\"0.5\"><title>layer 1 expert 0 "
                + "prefill: 0 of 0 tokens (0.0%)</title></rect><rect"), prefill);
        assertTrue(moe.contains("<rect x=\"70\" y=\"4\" width=\"14\" height=\"14\" fill=\"#ffffff\" stroke=\"#999\"/>"
                + "<text x=\"88\" y=\"15\">0.0%</text>"), moe);
        assertTrue(moe.contains("fill=\"#08306b\" stroke=\"#999\"/><text x=\"448\" y=\"15\">100.0%</text>"), moe);
        // Run counts: layer 0 {24, 20, 19, 17}: CV 2.5495 / 20; layer 1 {1, 8, 0, 7}: 3.5355 / 4.
        assertTrue(moe.contains("<tr><td>0</td><td>0.5000</td><td>0.1275</td><td>0 (24)</td><td>3 (17)</td></tr>"), moe);
        assertTrue(moe.contains("<tr><td>1</td><td>0.7500</td><td>0.8839</td><td>1 (8)</td><td>2 (0)</td></tr>"), moe);
        assertTrue(moe.contains("<tr><td>0</td><td>20</td><td>0.1250</td><td>0.5000</td><td>12.5000</td></tr>"), moe);
        assertTrue(moe.contains("<tr><td>3</td><td>0</td><td>-</td><td>-</td><td>0.0000</td></tr>"), moe);
        assertFalse(moe.contains("class=\"absent\""), moe);
    }

    @Test
    void reportPageSaysTheHeatmapWasNotRecordedWhenTheLayerWasOff() {
        String moe = section(HtmlReportWriter.html(content(LayerStatus.State.OFF, MoeTotals.EMPTY)),
                "Expert activations");
        assertTrue(moe.contains("<p class=\"absent\">not recorded in this run</p>"), moe);
        assertFalse(moe.contains("<rect"), moe);
        MoeTotals noExperts = new MoeTotals(true, 10, 0, new long[0][], new long[0][], new long[0], new long[0],
                new long[0][], new long[0][], new long[0], new long[0], new long[0], List.of(), new double[0], 16384,
                0, 0, 0, 0, 0, 0, 0);
        String dense = section(HtmlReportWriter.html(content(LayerStatus.State.ON, noExperts)), "Expert activations");
        assertTrue(dense.contains("<p class=\"absent\">the moe layer was on but read no expert ids (a model without "
                + "MUL_MAT_ID nodes?)</p>"), dense);
    }

    @Test
    void reportCommandGivesTheSummarysExpertFigures() throws Exception {
        SnapshotDirectory directory = saved(content(LayerStatus.State.ON, moe()));
        JsonNode summary = directory.summary().path("moe");
        JsonNode experts = SnapshotReport.json(directory).path("experts");
        assertTrue(experts.path("recorded").asBoolean(), experts.toString());
        assertEquals(4, experts.path("experts").asInt());
        assertEquals(2, experts.path("experts_used").asInt());
        assertEquals(summary.path("imbalance_cv").asDouble(), experts.path("imbalance_cv").asDouble());
        assertEquals(0.625, experts.path("imbalance_cv").asDouble());
        JsonNode layer0 = experts.path("layers").path("0");
        assertEquals(40, layer0.path("tokens").asLong());
        assertEquals(80, layer0.path("selections").asLong());
        assertEquals(0.5, layer0.path("cv").asDouble());
        assertEquals(summary.path("layers").path("0").path("cv").asDouble(), layer0.path("cv").asDouble());
        assertEquals(0.1275, layer0.path("cv_run").asDouble());
        assertEquals(0, layer0.path("hottest_expert").asInt());
        assertEquals(3, layer0.path("coldest_expert").asInt());
        assertEquals("[24,20,19,17]", layer0.path("counts").toString());
        assertEquals("[0.3,0.25,0.2375,0.2125]", layer0.path("shares").toString());
        JsonNode layer1 = experts.path("layers").path("1");
        assertEquals(1, layer1.path("hottest_expert").asInt());
        assertEquals(2, layer1.path("coldest_expert").asInt());
        assertEquals(0.8839, layer1.path("cv_run").asDouble());
        assertEquals(12.5, experts.path("per_expert").path("0").path("row_share_ms").asDouble());
        assertTrue(experts.path("per_expert").path("3").path("node_p50_ms").isNull());

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true));
        String text = bytes.toString();
        assertTrue(text.contains("Across experts (tokens per expert over the run, prefill + decode)\n"
                + "  4 experts, 2 per token, mean imbalance CV 0.6250\n"), text);
        assertTrue(text.contains("  0            40 0.5000  0.1275       0       3  "
                + "0:24 (30.0%) 1:20 (25.0%) 2:19 (23.8%) 3:17 (21.3%)\n"), text);
        assertTrue(text.contains("  3                 0           -           -        0.0000\n"), text);
    }

    @Test
    void reportCommandSaysExpertsWereNotRecordedWhenTheLayerWasOff() throws Exception {
        SnapshotDirectory directory = saved(content(LayerStatus.State.OFF, MoeTotals.EMPTY));
        JsonNode experts = SnapshotReport.json(directory).path("experts");
        assertFalse(experts.path("recorded").asBoolean());
        assertEquals("not recorded in this run (moe layer off)", experts.path("reason").asText());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true));
        assertTrue(bytes.toString().contains("Across experts (tokens per expert over the run, prefill + decode)\n"
                + "  not recorded in this run (moe layer off)\n"), bytes.toString());
        assertEquals(MoeTotals.EMPTY, SummarySnapshot.of(directory).moe());
    }

    @Test
    void replayRebuildsTheSummarysMoeFigures() throws Exception {
        MoeTotals expected = moe();
        MoeTotals replayed = SummarySnapshot.of(saved(content(LayerStatus.State.ON, expected))).moe();
        assertTrue(replayed.active());
        assertEquals(expected.windowTicks(), replayed.windowTicks());
        assertEquals(expected.expertsUsed(), replayed.expertsUsed());
        for (int l = 0; l < 2; l++) {
            assertArrayEquals(expected.windowDecode()[l], replayed.windowDecode()[l]);
            assertArrayEquals(expected.windowPrefill()[l], replayed.windowPrefill()[l]);
            assertArrayEquals(expected.totalDecode()[l], replayed.totalDecode()[l]);
            assertArrayEquals(expected.totalPrefill()[l], replayed.totalPrefill()[l]);
        }
        assertArrayEquals(expected.windowRowsPrefill(), replayed.windowRowsPrefill());
        assertArrayEquals(expected.windowRowsDecode(), replayed.windowRowsDecode());
        assertArrayEquals(expected.totalRowsPrefill(), replayed.totalRowsPrefill());
        assertArrayEquals(expected.totalRowsDecode(), replayed.totalRowsDecode());
        assertArrayEquals(expected.rowsUnreadByLayer(), replayed.rowsUnreadByLayer());
        assertArrayEquals(expected.cvByLayer(), replayed.cvByLayer());
        assertEquals(expected.experts(), replayed.experts(), "NaN figures come back from null as NaN");
        assertEquals(List.of(expected.idBytesBound(), expected.nodesRead(), expected.nodesTruncated(),
                expected.rowsTruncated(), expected.graphsWithoutIds(), expected.readFailures(), expected.idBytesCopied()),
                List.of(replayed.idBytesBound(), replayed.nodesRead(), replayed.nodesTruncated(),
                        replayed.rowsTruncated(), replayed.graphsWithoutIds(), replayed.readFailures(),
                        replayed.idBytesCopied()));
    }

    @Test
    void replayedMoePanelDrawsWhatTheLivePanelDrew() throws Exception {
        SnapshotContent content = content(LayerStatus.State.ON, moe());
        Snapshot replayed = SummarySnapshot.of(saved(content));
        List<String> live = moePanel(content.last());
        List<String> replay = moePanel(replayed);
        assertEquals("MoE experts  window: last 10 intervals  2 of 4 experts per token  imbalance CV 0.63",
                replay.getFirst(), String.join("\n", replay));
        assertTrue(replay.size() > 5, String.join("\n", replay));
        assertEquals(live, replay);
    }

    /** The rows from the MoE panel's title down, keys m on. */
    private static List<String> moePanel(Snapshot s) throws Exception {
        UiState ui = new UiState();
        ui.record(s);
        ui.endState = s.state();
        ui.body = BodyPanel.MOE;
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(120, 40));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        new MonitorScreen(Theme.MONOCHROME, List.of("1", "2", "3", "4"),
                List.of(new HelpPanel.Entry(List.of("q"), "quit")), "h help").draw(screen.newTextGraphics(), s, ui);
        screen.refresh(Screen.RefreshType.COMPLETE);
        int title = Fixtures.find(terminal, "MoE experts");
        assertTrue(title >= 0, Fixtures.screen(terminal));
        List<String> rows = new ArrayList<>();
        for (int r = title; r < 39; r++) {
            rows.add(Fixtures.row(terminal, r).stripTrailing());
        }
        while (!rows.isEmpty() && rows.getLast().isEmpty()) {
            rows.removeLast();
        }
        return rows;
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }
}
