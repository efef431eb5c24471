package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A snapshot's encoder passes (summary.json's encode_calls and encode_tokens) reach replay and the report, and a
 * summary written before they were counted reads as none.
 */
class EncodeSnapshotTest {
    @TempDir
    Path temp;

    /** The fixture run's snapshot with 5 encoder passes of 60 tokens in its figures, written out. */
    private Path written() throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        Snapshot last = base.last().withFigures(f -> {
            TokenTotals t = f.tokens();
            return f.withTokens(new TokenTotals(t.decodeCalls(), t.prefillCalls(), t.decodeStepCalls(),
                    t.failedCalls(), t.tokensPrefill(), t.tokensDecode(), t.prefillBusyNs(), t.decodeBusyNs(),
                    t.contexts(), t.requests(), t.activeRequests(), t.batchesUnread(), t.batchSizes(), t.sequences(),
                    t.speculative(), 5, 60));
        });
        SnapshotContent content = new SnapshotContent(last, base.window(), base.tensorNames(), base.histograms(),
                base.ticks(), base.trigger(), base.createdEpochMs(), base.infertopVersion(), base.threadNames(), null);
        Path dir = temp.resolve("snap");
        SnapshotDirectoryWriter.write(dir, content);
        return dir;
    }

    private static String reportText(SnapshotDirectory directory) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SnapshotReport.printText(directory, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void replayAndTheReportCarryTheEncoderPasses() throws Exception {
        SnapshotDirectory directory = SnapshotDirectory.open(written());
        assertEquals(5, directory.summary().path("encode_calls").asLong());
        TokenTotals tokens = SummarySnapshot.of(directory).total().tokens();
        assertEquals(5, tokens.encodeCalls());
        assertEquals(60, tokens.encodeTokens());
        assertEquals(4, tokens.decodeCalls(), "the fixture's four llama_decode calls, no more");
        assertEquals(3, tokens.tokensDecode());
        JsonNode report = SnapshotReport.json(directory).path("tokens");
        assertEquals(5, report.path("encode_calls").asLong());
        assertEquals(60, report.path("encode_tokens").asLong());
        assertTrue(reportText(directory).contains(
                "  encode        60 tokens in 5 encoder passes (not in the figures above)\n"), reportText(directory));
    }

    @Test
    void aSummaryFromBeforeEncodeCountsReadsAsNone() throws Exception {
        Path dir = written();
        Path summaryFile = dir.resolve(SnapshotDirectoryWriter.SUMMARY);
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode summary = (ObjectNode) mapper.readTree(summaryFile.toFile());
        summary.remove("encode_calls");
        summary.remove("encode_tokens");
        summaryFile.toFile().setWritable(true);
        Files.writeString(summaryFile, mapper.writeValueAsString(summary));

        SnapshotDirectory directory = SnapshotDirectory.open(dir);
        TokenTotals tokens = SummarySnapshot.of(directory).total().tokens();
        assertEquals(0, tokens.encodeCalls());
        assertEquals(0, tokens.encodeTokens());
        assertEquals(4, tokens.decodeCalls());
        JsonNode report = SnapshotReport.json(directory).path("tokens");
        assertEquals(0, report.path("encode_calls").asLong());
        assertEquals(0, report.path("encode_tokens").asLong());
        assertFalse(reportText(directory).contains("encode"), reportText(directory));
    }
}
