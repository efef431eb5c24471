package dev.infertop.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.Figures;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.TokenTotals;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.ThreadTotals;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JsonLinesViewTest {
    private static final OperatorTotals OPERATORS = new OperatorTotals(
            List.of(new OpTotals("MUL_MAT", 20, 20, 8_000_000, 15_000_000, 1_000_000,
                    new LatencySummary(20, 0.4, 0.5, 0.6, 0.7, 0.4), "blk.0.ffn_up [2816,1,1,1]")),
            List.of(new ThreadTotals(101, 20, 7_000_000, 500_000, 1, 0)), 2, 1);

    private static Snapshot snapshot(boolean isFinal) {
        TokenTotals interval = new TokenTotals(3, 1, 2, 0, 64, 2, 10_000_000, 4_000_000, 1);
        TokenTotals total = new TokenTotals(30, 10, 20, 1, 640, 20, 100_000_000, 40_000_000, 1);
        LatencySummary ttft = new LatencySummary(10, 10, 11, 12, 13, 10.5);
        LatencySummary tpot = new LatencySummary(20, 2, 2.1, 2.2, 2.3, 2.05);
        return new Snapshot(5, isFinal ? RunState.EXITED : RunState.RUNNING,
                new TargetInfo(42, "llama-bench", "/m/tiny.gguf", List.of()),
                new Figures(1_000_000_000L, interval, ttft, tpot, List.of(new BackendTotals("CPU", 3, 300, 12_000_000)),
                        new BackendTotals("CPU", 3, 300, 11_000_000), OperatorTotals.EMPTY, Fixtures.sched(),
                        CounterTotals.EMPTY, List.of()),
                new Figures(5_000_000_000L, total, ttft, tpot, List.of(new BackendTotals("CPU", 30, 3000, 120_000_000)),
                        new BackendTotals("CPU", 30, 3000, 110_000_000), OPERATORS, Fixtures.sched(),
                        CounterTotals.EMPTY, List.of()),
                0, List.of(new LayerStatus(Layer.TOKEN, LayerStatus.State.ON, "", List.of()),
                        new LayerStatus(Layer.GRAPH, LayerStatus.State.UNAVAILABLE, "ggml_graph_compute not found",
                                List.of())),
                MoeTotals.EMPTY);
    }

    @Test
    void intervalObjectCarriesIntervalFigures() throws Exception {
        JsonNode json = new ObjectMapper().readTree(JsonLinesView.toJson(snapshot(false)));
        assertFalse(json.get("final").asBoolean());
        assertEquals("interval", json.get("scope").asText());
        assertEquals(3, json.get("decode_calls").asLong());
        assertEquals(64, json.get("tokens_prefill").asLong());
        assertEquals(500.0, json.get("decode_tokens_per_s").asDouble(), 1e-9);
        assertEquals(6400.0, json.get("prefill_tokens_per_s").asDouble(), 1e-9);
        assertEquals(3, json.get("graph_computes").get("CPU").asLong());
        assertEquals("unavailable", json.get("layers").get("graph").get("state").asText());
        assertTrue(json.get("layers").get("graph").get("reason").asText().contains("ggml_graph_compute"));
    }

    @Test
    void finalObjectCarriesRunTotals() throws Exception {
        JsonNode json = new ObjectMapper().readTree(JsonLinesView.toJson(snapshot(true)));
        assertTrue(json.get("final").asBoolean());
        assertEquals("total", json.get("scope").asText());
        assertEquals(30, json.get("decode_calls").asLong());
        assertEquals(640, json.get("tokens_prefill").asLong());
        assertEquals(20, json.get("tokens_decode").asLong());
        assertEquals(1, json.get("failed_calls").asLong());
        assertEquals(5.0, json.get("span_s").asDouble(), 1e-9);
        assertEquals(4.0, json.get("decode_throughput_per_s").asDouble(), 1e-9); // 20 tokens over 5 s
        assertEquals(12.0, json.get("ttft_ms").get("p99").asDouble(), 1e-9);
        assertEquals(2.0, json.get("tpot_ms").get("p50").asDouble(), 1e-9);
        assertEquals(30, json.get("graph_computes").get("CPU").asLong());
        assertEquals(0, json.get("lost_events").asLong());
        assertEquals("exited", json.get("target_state").asText());
        JsonNode mulMat = json.get("ops").get("MUL_MAT");
        assertEquals(20, mulMat.get("nodes").asLong());
        assertEquals(8.0, mulMat.get("wall_ms").asDouble(), 1e-9);
        assertEquals(15.0, mulMat.get("work_ms").asDouble(), 1e-9);
        assertEquals(0.6, mulMat.get("p99_ms").asDouble(), 1e-9);
        assertEquals("blk.0.ffn_up [2816,1,1,1]", mulMat.get("last_shape").asText());
        JsonNode thread = json.get("threads").get("101");
        assertEquals(7.0, thread.get("work_ms").asDouble(), 1e-9);
        assertEquals(0.5, thread.get("barrier_wait_ms").asDouble(), 1e-9);
        assertEquals(2, json.get("op_graphs").asLong());
        assertEquals(1, json.get("op_graphs_unattributed").asLong());
    }

    /** {@code snapshot(isFinal)} after 2 encoder passes of 24 tokens in its interval, 7 of 90 in the run. */
    private static Snapshot withEncodes(boolean isFinal) {
        Snapshot s = snapshot(isFinal);
        return new Snapshot(s.sequence(), s.state(), s.target(), s.interval().withTokens(encodes(s.interval(), 2, 24)),
                s.total().withTokens(encodes(s.total(), 7, 90)), s.lostEvents(), s.layers(), s.moe(), s.limits());
    }

    private static TokenTotals encodes(Figures f, long calls, long tokens) {
        TokenTotals t = f.tokens();
        return new TokenTotals(t.decodeCalls(), t.prefillCalls(), t.decodeStepCalls(), t.failedCalls(),
                t.tokensPrefill(), t.tokensDecode(), t.prefillBusyNs(), t.decodeBusyNs(), t.contexts(), t.requests(),
                t.activeRequests(), t.batchesUnread(), t.batchSizes(), t.sequences(), t.speculative(), calls, tokens);
    }

    @Test
    void encodeCallsAndTokensAreWrittenApartFromTheDecodeCalls() throws Exception {
        JsonNode interval = new ObjectMapper().readTree(JsonLinesView.toJson(withEncodes(false)));
        assertEquals(2, interval.get("encode_calls").asLong());
        assertEquals(24, interval.get("encode_tokens").asLong());
        assertEquals(3, interval.get("decode_calls").asLong());
        assertEquals(64, interval.get("tokens_prefill").asLong());
        assertEquals(2, interval.get("tokens_decode").asLong());
        JsonNode total = new ObjectMapper().readTree(JsonLinesView.toJson(withEncodes(true)));
        assertEquals(7, total.get("encode_calls").asLong());
        assertEquals(90, total.get("encode_tokens").asLong());
        assertEquals(30, total.get("decode_calls").asLong());
        // Next to the decode call counts in the line.
        List<String> keys = new java.util.ArrayList<>();
        total.fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("decode_calls", "prefill_calls", "decode_step_calls", "failed_calls", "encode_calls",
                "encode_tokens", "tokens_prefill"), keys.subList(keys.indexOf("decode_calls"),
                keys.indexOf("decode_calls") + 7));
    }

    @Test
    void aRunWithoutEncodeCallsWritesZeros() throws Exception {
        JsonNode json = new ObjectMapper().readTree(JsonLinesView.toJson(snapshot(true)));
        assertEquals(0, json.get("encode_calls").asLong());
        assertTrue(json.get("encode_calls").isIntegralNumber());
        assertEquals(0, json.get("encode_tokens").asLong());
    }

    @Test
    void theManPageDocumentsTheEncodeFields() throws Exception {
        String man = java.nio.file.Files.readString(java.nio.file.Path.of("man/infertop.1"));
        String jsonFields = man.substring(man.indexOf(".SH JSON FIELDS"), man.indexOf(".SH SNAPSHOTS"));
        assertTrue(jsonFields.contains("\n.B encode_calls, encode_tokens\n"), "JSON FIELDS documents them");
    }
}
