package dev.infertop.view;

import dev.infertop.model.DecodeSteps;
import dev.infertop.model.Layer;
import dev.infertop.json.JsonLinesView;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The roofline panel (key R) and the JSON "roofline" object's decode figures, from fixed snapshots. */
public class RooflinePanelTest {
    /** 40 GB/s and 200 GFLOP/s: the ridge at 5 FLOP/byte. */
    public static final Roofline.Ceilings CEILINGS = new Roofline.Ceilings(40e9, 200e9);

    private DefaultVirtualTerminal terminal;
    private final UiState ui = new UiState();

    /**
     * Over 0.8 s MUL_MAT moved 24 GB and did 24 GFLOP (30 GB/s = 75 % of memory, 1 FLOP/byte: memory-bound);
     * FLASH_ATTN_EXT over 0.1 s 0.5 GB and 15 GFLOP (150 GFLOP/s = 75 % of compute: compute-bound); ADD over
     * 0.1 s 1.2 GB and 0.2 GFLOP (12 GB/s, 2 GFLOP/s: neither). One decode token streams 300 MB of weights.
     */
    public static RooflineTotals totals(Roofline.Ceilings ceilings) {
        return new RooflineTotals(List.of(
                new RooflineTotals.OpRoofline("ADD", 300, 1_200_000_000L, 0, 200_000_000L, 100_000_000L),
                new RooflineTotals.OpRoofline("MUL_MAT", 4000, 24_000_000_000L, 23_000_000_000L, 24_000_000_000L,
                        800_000_000L),
                new RooflineTotals.OpRoofline("FLASH_ATTN_EXT", 100, 500_000_000L, 0, 15_000_000_000L,
                        100_000_000L)), 69, 300_000_000L, ceilings);
    }

    /** {@code s} with {@code roofline} in both its figures (the fixture's interval decodes 69 tok/s). */
    public static Snapshot with(Snapshot s, RooflineTotals roofline) {
        return s.withFigures(f -> new Figures(f.spanNs(), f.tokens(), f.ttft(), f.tpot(), f.backends(), f.cpuGraphs(),
                f.operators(), f.sched(), f.counters(), f.backendOps(), roofline));
    }

    private void render(Snapshot snapshot) throws IOException {
        render(snapshot, 150);
    }

    private void render(Snapshot snapshot, int columns) throws IOException {
        ui.body = BodyPanel.ROOFLINE;
        terminal = Fixtures.drawn(snapshot, ui, columns, 24);
    }

    private int rowStarting(String prefix) {
        return Fixtures.rowStarting(terminal, prefix);
    }

    @Test
    void ceilingsDecodeBoundBesideMeasuredAndAVerdictPerOp() throws IOException {
        render(with(Fixtures.snapshot(LayerStatus.State.ON), totals(CEILINGS)));
        int top = rowStarting(" ROOFLINE");
        assertEquals(" ROOFLINE  memory 40.0 GB/s  compute 200.0 GFLOP/s  ridge 5.00 FLOP/B  interval",
                row(terminal, top).stripTrailing());
        // 40 GB/s / 300 MB = 133.3 tok/s; the fixture's interval decodes 69 tokens in 1 s of decode calls: 52 %
        assertEquals(" decode: bound 133.3 tok/s  measured 69.0 tok/s (52% of bound)  (memory ceiling / weights "
                + "300.0 MB per token)", row(terminal, top + 1).stripTrailing());
        assertEquals(" neither: look at threads, barriers and interference  (bound: at >= 50% of a ceiling, the memory "
                + "one below the ridge only)", row(terminal, top + 2).stripTrailing());
        assertEquals("OP                 NODES    GB/s  %MEM  GFLOP/s  %CMP  FLOP/B VERDICT",
                row(terminal, top + 3).stripTrailing());
        // most wall time first
        assertEquals("MUL_MAT             4000    30.0   75%     30.0   15%    1.00 memory-bound",
                row(terminal, top + 4).stripTrailing());
        assertEquals("ADD                  300    12.0   30%      2.0    1%    0.17 neither: look at threads, "
                + "barriers and interference", row(terminal, top + 5).stripTrailing());
        assertEquals("FLASH_ATTN_EXT       100     5.0   13%    150.0   75%   30.00 compute-bound",
                row(terminal, top + 6).stripTrailing());
        assertEquals("", row(terminal, top + 7).strip(), "nothing of the operator table shows through");
    }

    @Test
    void withoutCeilingsItSaysHowToMeasureThemInsteadOfAVerdict() throws IOException {
        render(with(Fixtures.snapshot(LayerStatus.State.ON), totals(null)));
        int top = rowStarting(" ROOFLINE");
        assertEquals(" ROOFLINE  interval", row(terminal, top).stripTrailing());
        // no ceilings: the next line says how to get them; no legend, no share, no verdict
        assertEquals(" " + RooflinePanel.MEASURE_HINT, row(terminal, top + 1).stripTrailing());
        assertTrue(RooflinePanel.MEASURE_HINT.contains("infertop machine --measure"));
        assertEquals(" decode: measured 69.0 tok/s  weights 300.0 MB per token", row(terminal, top + 2).stripTrailing());
        assertEquals("MUL_MAT             4000    30.0     -     30.0     -    1.00 - (no ceilings)",
                row(terminal, rowStarting("OP ") + 1).stripTrailing());
        assertFalse(Fixtures.screen(terminal).contains("memory-bound"), Fixtures.screen(terminal));
    }

    @Test
    void withPmuCountsTheCountersVerdictStandsBesideAsASecondOpinion() throws IOException {
        // MUL_MAT: 12 refills per 1k instructions (memory-bound by the PMU); ADD: IPC 2 (compute-bound by the PMU,
        // neither by the roofline); FLASH_ATTN_EXT not counted.
        Snapshot counted = with(CountersPanelTest.with(new LayerStatus(Layer.COUNTERS,
                LayerStatus.State.ON, "", List.of()), CountersPanelTest.hardware(), false), totals(CEILINGS));
        render(counted);
        int heading = rowStarting("OP ");
        assertEquals("OP                 NODES    GB/s  %MEM  GFLOP/s  %CMP  FLOP/B PMU (2nd opinion) VERDICT",
                row(terminal, heading).stripTrailing());
        assertEquals("MUL_MAT             4000    30.0   75%     30.0   15%    1.00 memory-bound      memory-bound",
                row(terminal, heading + 1).stripTrailing());
        assertEquals("ADD                  300    12.0   30%      2.0    1%    0.17 compute-bound     neither: look at "
                + "threads, barriers and interference", row(terminal, heading + 2).stripTrailing());
        assertEquals("FLASH_ATTN_EXT       100     5.0   13%    150.0   75%   30.00 -                 compute-bound",
                row(terminal, heading + 3).stripTrailing());
    }

    @Test
    void at80ColumnsTheBoundBesideTheMeasuredRateAndEachVerdictStillShow() throws IOException {
        render(with(Fixtures.snapshot(LayerStatus.State.ON), totals(CEILINGS)), 80);
        int top = rowStarting(" ROOFLINE");
        assertEquals(" ROOFLINE  memory 40.0 GB/s  compute 200.0 GFLOP/s  ridge 5.00 FLOP/B  interval",
                row(terminal, top).stripTrailing());
        assertTrue(row(terminal, top + 1).startsWith(" decode: bound 133.3 tok/s  measured 69.0 tok/s (52% of bound)"),
                row(terminal, top + 1));
        assertTrue(row(terminal, top + 2).startsWith(" neither: look at threads, barriers and interference"));
        assertEquals("MUL_MAT             4000    30.0   75%     30.0   15%    1.00 memory-bound",
                row(terminal, top + 4).stripTrailing());
        // the words after "neither" do not fit: the line above the table has them
        assertEquals("ADD                  300    12.0   30%      2.0    1%    0.17 neither",
                row(terminal, top + 5).stripTrailing());
        assertEquals("FLASH_ATTN_EXT       100     5.0   13%    150.0   75%   30.00 compute-bound",
                row(terminal, top + 6).stripTrailing());
    }

    @Test
    void aDecodeFasterThanTheBoundSaysWhatThatMeans() {
        // 300 MB per token at 25 GB/s: 83.3 tok/s bound, 100 measured
        assertEquals("decode: bound 83.3 tok/s  measured 100.0 tok/s (120% of bound: above it, weights from cache or the "
                + "ceiling measured low)  (memory ceiling / weights 300.0 MB per token)",
                RooflinePanel.decodeLine(totals(new Roofline.Ceilings(25e9, 200e9)), 100.0));
    }

    /**
     * Steps of 1 and 4 tokens on a machine of 10 GB/s and 25 GFLOP/s (ridge 2.5): 400 MB of weights a step, KV
     * 40 kB a position; 1-token steps at 400 positions (16 MB of KV), 4-token steps at 1,000 (40 MB). Per token
     * 416 MB and 110 MB; the bound 24.0 and 90.9 tok/s. Pooled, a token does 0.8 GFLOP and reads 11.2 MB of KV,
     * a step 400 MB of weights: b slots give b·0.8e9 / (400e6 + b·11.2e6) FLOP/B (1.95 at 1), which reaches the
     * ridge at 2.5 × 400e6 / (0.8e9 − 2.5 × 11.2e6) = 1.3 slots.
     */
    @Test
    void decodeStepsOfEachBatchSizeWithTheirBoundAndTheCurveBySlots() {
        DecodeSteps one = new DecodeSteps(1, 10, 10, 4_000_000_000L,
                160_000_000L, 4_000, 8_000_000_000L, 1_000_000_000L);
        DecodeSteps four = new DecodeSteps(4, 10, 40, 4_000_000_000L,
                400_000_000L, 10_000, 32_000_000_000L, 2_000_000_000L);
        RooflineTotals totals = new RooflineTotals(List.of(), 0, 0, 0, 0, 0, new Roofline.Ceilings(10e9, 25e9),
                List.of(one, four), 40_000);
        List<String> lines = RooflinePanel.decodeStepLines(totals);
        assertEquals(List.of(
                "decode steps (run): weights 400.0 MB/step, KV 40.0 kB per context position; KV reads pass the weights "
                        + "past 10000 positions/step",
                "  1/step    10 steps: KV 16.0 MB/step, 416.0 MB/token, 1.92 FLOP/B  bound 24.0 tok/s, measured 10.0 (42%)",
                "  4/step    10 steps: KV 40.0 MB/step, 110.0 MB/token, 7.27 FLOP/B  bound 90.9 tok/s, measured 20.0 (22%)",
                "intensity by busy slots: 1:1.95 2:3.79 4:7.19 8:13.07 16:22.10 FLOP/B; ridge 2.50 at ~1.3 slots"),
                lines);
    }

    @Test
    void aCountersSetWithoutRefillsGivesNoSecondOpinion() {
        OpCounters matmul = new OpCounters("MUL_MAT", 10, 0, 0, List.of(5_000_000L), 5_000_000L, 4_000_000L);
        CounterTotals software = new CounterTotals("software", List.of("task-clock"), 64, -1, -1, -1, List.of(matmul),
                List.of(5_000_000L), 10, 0, 0, 0, 5_000_000L, List.of(0.0));
        assertEquals("-", RooflinePanel.pmuVerdict(software, "MUL_MAT"));
        assertEquals("memory-bound", RooflinePanel.pmuVerdict(CountersPanelTest.hardware(), "MUL_MAT"));
        assertEquals("-", RooflinePanel.pmuVerdict(CountersPanelTest.hardware(), "SOFT_MAX"));
    }

    @Test
    void withNothingCostedItSaysWhatItNeeds() throws IOException {
        render(with(Fixtures.snapshot(LayerStatus.State.ON), new RooflineTotals(List.of(), 0, 0, CEILINGS)));
        int top = rowStarting(" ROOFLINE");
        assertEquals(" decode: measured 69.0 tok/s  (weights per token not seen yet: no decode step read)",
                row(terminal, top + 1).stripTrailing());
        assertTrue(row(terminal, rowStarting("OP ") + 1).startsWith(" (no costed node in this span"),
                Fixtures.screen(terminal));
    }

    @Test
    void aHostileOpNameIsShownVisibleNotInterpreted() throws IOException {
        RooflineTotals hostile = new RooflineTotals(List.of(new RooflineTotals.OpRoofline("X\u001b[2J\u0007Y", 1,
                1_000_000, 0, 1_000_000, 1_000_000)), 0, 0, CEILINGS);
        render(with(Fixtures.snapshot(LayerStatus.State.ON), hostile));
        String op = row(terminal, rowStarting("OP ") + 1);
        assertFalse(op.contains("\u001b") || op.contains("\u0007"), op);
        assertTrue(op.startsWith("X"), op);
    }

    @Test
    void jsonHasTheMeasuredDecodeRateBesideTheBound() throws IOException {
        JsonNode roofline = new ObjectMapper().readTree(JsonLinesView.toJson(
                with(Fixtures.snapshot(LayerStatus.State.ON), totals(CEILINGS)))).get("roofline");
        assertEquals(133.33, roofline.get("decode_bound_tokens_per_s").asDouble());
        assertEquals(69.0, roofline.get("measured_decode_tokens_per_s").asDouble());
        assertEquals("memory-bound", roofline.get("ops").get("MUL_MAT").get("verdict").asText());
        JsonNode noCeilings = new ObjectMapper().readTree(JsonLinesView.toJson(
                with(Fixtures.snapshot(LayerStatus.State.ON), totals(null)))).get("roofline");
        assertFalse(noCeilings.has("decode_bound_tokens_per_s"));
        assertEquals(69.0, noCeilings.get("measured_decode_tokens_per_s").asDouble());
    }
}
