package dev.infertop.snapshot;

import dev.infertop.model.DecodeSteps;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.RooflineTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.RooflinePanelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replay gives the roofline panel the summary's roofline (the same ops, decode figures and ceilings), and
 * {@code infertop report} prints it.
 */
class RooflineReplayTest {
    @TempDir
    Path temp;

    private SnapshotDirectory written(RooflineTotals roofline) throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        SnapshotContent content = new SnapshotContent(RooflinePanelTest.with(base.last(), roofline), base.window(),
                base.tensorNames(), base.histograms(), base.ticks(), base.trigger(), base.createdEpochMs(),
                base.infertopVersion(), base.threadNames(), null);
        Path dir = temp.resolve("snap-" + System.nanoTime());
        SnapshotDirectoryWriter.write(dir, content);
        return SnapshotDirectory.open(dir);
    }

    private Snapshot replayed(RooflineTotals roofline) throws Exception {
        return SummarySnapshot.of(written(roofline));
    }

    @Test
    void theReportPrintsTheRooflineAndItsJsonCarriesTheSummarysObject() throws Exception {
        SnapshotDirectory directory = written(RooflinePanelTest.totals(RooflinePanelTest.CEILINGS));
        JsonNode roofline = SnapshotReport.json(directory).path("roofline");
        assertTrue(roofline.path("recorded").asBoolean());
        assertEquals(133.33, roofline.path("decode_bound_tokens_per_s").asDouble());
        assertEquals("memory-bound", roofline.path("ops").path("MUL_MAT").path("verdict").asText());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("""
                Roofline (bytes and FLOPs from the nodes' shapes and types, over the run)
                  memory ceiling 40.00 GB/s, compute ceiling 200.00 GFLOP/s, ridge 5.000 FLOP/byte
                """), text);
        // the summary's run decoded 3 tokens; its rate is whatever the fixture's was: only its place is checked
        assertTrue(text.contains("  decode: bound 133.33 tok/s, measured "), text);
        assertTrue(text.contains("  MUL_MAT                   4000     30.00     30.00     1.000    75    15 "
                + "memory-bound\n"), text);
        assertTrue(text.indexOf("  MUL_MAT ") < text.indexOf("  ADD ") && text.indexOf("  ADD ")
                < text.indexOf("  FLASH_ATTN_EXT "), "most wall time first:\n" + text);

        JsonNode none = SnapshotReport.json(written(RooflineTotals.EMPTY)).path("roofline");
        assertFalse(none.path("recorded").asBoolean());
        assertTrue(none.path("reason").asText().startsWith("not recorded in this run"), none.toString());
    }

    @Test
    void replayRebuildsTheRooflineFromTheSummary() throws Exception {
        RooflineTotals written = RooflinePanelTest.totals(RooflinePanelTest.CEILINGS);
        RooflineTotals read = replayed(written).total().roofline();
        // Every figure is kept exactly here: wall times are whole milliseconds, ceilings whole GB/s and GFLOP/s.
        assertEquals(written, read);
        RooflineTotals without = replayed(RooflinePanelTest.totals(null)).interval().roofline();
        assertNull(without.ceilings());
        assertEquals(written.ops(), without.ops());
    }

    @Test
    void aSummaryWithoutRooflineReplaysAnEmptyOne() throws Exception {
        assertEquals(RooflineTotals.EMPTY, replayed(RooflineTotals.EMPTY).total().roofline());
    }

    /** The summary's decode steps come back by size, and the report lists them. */
    @Test
    void decodeStepsOfEverySizeReplayAndPrint() throws Exception {
        RooflineTotals base = RooflinePanelTest.totals(RooflinePanelTest.CEILINGS);
        // Per step: 4 MB of weights, 0.1 or 0.4 MB of KV (100 or 400 positions of 1,000 B), 8 or 32 MFLOP, 1 or 2 ms.
        RooflineTotals written = new RooflineTotals(base.ops(), base.decodeGraphs(), base.weightBytesPerDecodeToken(),
                0, 0, 0, base.ceilings(), java.util.List.of(
                new DecodeSteps(1, 10, 10, 40_000_000, 1_000_000, 1_000, 80_000_000, 10_000_000),
                new DecodeSteps(4, 5, 20, 20_000_000, 2_000_000, 2_000, 160_000_000, 10_000_000)),
                1_000);
        SnapshotDirectory directory = written(written);
        assertEquals(written.decodeSteps(), SummarySnapshot.of(directory).total().roofline().decodeSteps());
        assertEquals(1_000, SummarySnapshot.of(directory).total().roofline().kvBytesPerPosition());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        // Ridge 5: b x 8 MFLOP / (4 MB + b x 0.1 MB) = 5 at b = 2.7; 4 MB over 1,000 B a position: 4,000 positions.
        assertTrue(text.contains("  decode steps: KV 1000 bytes per context position; ridge reached at 2.7 busy "
                + "sequences; KV reads pass the weights past 4000 positions a step\n"), text);
        // 4 tokens a step: (4 MB + 0.4 MB) / 4 = 1.1 MB a token, 7.273 FLOP/B, 2,000 tok/s against 40 GB/s / 1.1 MB.
        assertTrue(text.contains("       4       5      4000000       400000      1100000     7.273     2000.0    "
                + "36363.6 "), text);
        assertTrue(text.indexOf("       1      10 ") < text.indexOf("       4       5 "), "smallest first:\n" + text);
    }
}
