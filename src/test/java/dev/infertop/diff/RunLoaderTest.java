package dev.infertop.diff;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A --json log read as a run: its interval objects as samples, its final object as the totals; bad logs refused. */
class RunLoaderTest {
    @TempDir
    Path temp;

    private static final String INTERVAL = "{\"final\":false,\"scope\":\"interval\",\"span_s\":0.5,\"tokens_decode\":"
            + "%d,\"tpot_ms\":{\"count\":%d,\"mean\":%s},\"ttft_ms\":{\"count\":0,\"mean\":0},"
            + "\"ops\":{\"MUL_MAT\":{\"groups\":%d,\"wall_ms\":%s},\"ADD\":{\"groups\":0,\"wall_ms\":0}}}";
    private static final String FINAL = "{\"final\":true,\"scope\":\"total\",\"span_s\":1.0,\"tokens_decode\":30,"
            + "\"op_graphs\":30,\"cpu_graph_computes\":30,"
            + "\"decode_tokens_per_s\":100.0,\"tpot_ms\":{\"count\":30,\"mean\":10.0},\"ops\":{\"MUL_MAT\":"
            + "{\"groups\":450,\"wall_ms\":180.0}}}";

    @Test
    void intervalsBecomeSamplesAndTheFinalObjectTheTotals() throws Exception {
        Path log = temp.resolve("run.jsonl");
        Files.writeString(log, String.format(INTERVAL, 10, 10, "9.0", 150, "60.0") + "\n"
                + String.format(INTERVAL, 20, 20, "10.5", 300, "120.0") + "\n" + FINAL + "\n");
        RunRecord run = RunLoader.load(log);
        assertEquals("json log", run.source());
        assertEquals(30, run.totals().path("tokens_decode").asLong());
        assertEquals(2, run.intervals("tpot").size());
        assertEquals(0.5, run.intervals("tpot").get(1).startS());
        assertEquals(10.5, run.intervals("tpot").get(1).meanMs());
        assertEquals(0.4, run.intervals("op:MUL_MAT").getFirst().meanMs(), 1e-12); // 60 ms over 150 calls
        assertEquals(0, run.intervals("op:ADD").size(), "an interval that did not trace the op is no sample");
        RunMetrics metrics = new RunMetrics(run);
        // 15 calls per generated token (450 over 30): samples 0.4 × 15 and 0.4 × 15 ms per token
        assertEquals(6.0, metrics.opSamples("MUL_MAT")[0], 1e-12);
        assertEquals(6.0, metrics.ops().get("MUL_MAT").msPerToken(), 1e-12); // 180 ms over 30 tokens
        assertEquals(9.0, metrics.decodeSamples()[0], 1e-12);
    }

    @Test
    void badInputIsOneLineNamingThePath() throws Exception {
        Path missing = temp.resolve("nothing");
        assertEquals(missing + ": no such snapshot directory or --json log",
                assertThrows(DiffInputException.class, () -> RunLoader.load(missing)).getMessage());
        Path cut = temp.resolve("cut.jsonl");
        Files.writeString(cut, String.format(INTERVAL, 10, 10, "9.0", 150, "60.0") + "\n");
        assertEquals(cut + ": no final object (\"final\": true) in 1 lines: a --json log cut short, or not one",
                assertThrows(DiffInputException.class, () -> RunLoader.load(cut)).getMessage());
        Path text = temp.resolve("text.log");
        Files.writeString(text, "{\"a\":1}\n");
        assertEquals(text + ": line 1 is not an infertop --json object (no scope, no tokens_decode)",
                assertThrows(DiffInputException.class, () -> RunLoader.load(text)).getMessage());
        Path empty = temp.resolve("empty-dir");
        Files.createDirectories(empty);
        assertEquals(empty + " is not an infertop snapshot: it has no summary.json",
                assertThrows(DiffInputException.class, () -> RunLoader.load(empty)).getMessage());
    }
}
