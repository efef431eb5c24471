package dev.infertop.metrics;

import dev.infertop.json.JsonLinesView;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.GraphTokenCounts;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.OpEstimate;
import dev.infertop.model.TokenSource;
import dev.infertop.model.TokenTotals;
import dev.infertop.model.WhisperTotals;
import dev.infertop.view.OffloadFixtures;
import dev.infertop.ManPage;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.view.Fixtures;
import dev.infertop.model.JsonSchema;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A fixed snapshot (view.Fixtures) and reference histograms to the exposition, number by number. */
class MetricsMappingTest {
    private static final long ATTACHED_MS = 1_700_000_000_000L;

    static MetricsFrame frame(Snapshot snapshot) {
        Histogram tpot = new Histogram(3);
        tpot.recordValueWithCount(14_200_000, 60); // 14.2 ms: in (10, 20] ms
        tpot.recordValueWithCount(4_000_000, 9);   // 4 ms: in (2, 5] ms
        Histogram ttft = new Histogram(3);
        ttft.recordValue(16_000_000);              // 16 ms: in (10, 20] ms
        Histogram matmul = new Histogram(2);
        matmul.recordValueWithCount(120_000, 3000); // 120 µs: in (100, 200] µs
        matmul.recordValueWithCount(30_000, 1000);  // 30 µs: in (20, 50] µs
        return new MetricsFrame(snapshot, ATTACHED_MS, "7c3dfb36",
                Map.of("tpot", LatencyBuckets.of(tpot, LatencyBuckets.TPOT_EDGES_NS),
                        "ttft", LatencyBuckets.of(ttft, LatencyBuckets.TTFT_EDGES_NS),
                        "op:MUL_MAT", LatencyBuckets.of(matmul, LatencyBuckets.OP_EDGES_NS)));
    }

    static String openMetrics(MetricsFrame frame) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MetricsServer.Format.OPENMETRICS.writer.write(out, MetricsMapping.snapshots(frame));
        return out.toString(StandardCharsets.UTF_8);
    }

    static String prometheusText(MetricsFrame frame) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MetricsServer.Format.PROMETHEUS_TEXT.writer.write(out, MetricsMapping.snapshots(frame));
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void assertLine(String exposition, String line) {
        assertTrue(exposition.lines().anyMatch(line::equals), "no line '" + line + "' in:\n" + exposition);
    }

    @Test
    void countersAreTheRunsTotals() throws IOException {
        String text = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertLine(text, "# TYPE infertop_decode_tokens counter");
        assertLine(text, "infertop_decode_tokens_total 69.0");
        assertLine(text, "infertop_prefill_tokens_total 64.0");
        assertLine(text, "infertop_decode_calls_total 70.0");
        // The fixture's run totals differ from its interval: 490 computes, 6.86 s busy.
        assertLine(text, "infertop_graph_computes_total{backend=\"CPU\"} 490.0");
        assertLine(text, "infertop_graph_busy_seconds_total{backend=\"CPU\"} 6.86");
        assertLine(text, "infertop_barrier_wait_seconds_total{thread=\"103\"} 0.5");
        assertLine(text, "infertop_barrier_wait_seconds_total{thread=\"102\"} 0.12");
        assertLine(text, "infertop_thread_work_seconds_total{thread=\"101\"} 0.9");
        assertLine(text, "infertop_lost_events_total 0.0");
        // Counters start when infertop attached: a new target, a new series start.
        assertLine(text, "infertop_decode_tokens_created 1700000000.000");
        assertFalse(text.contains("infertop_moe_expert_selections"), "no MoE metric while the moe layer is off");
    }

    /** The fixture's figures with {@code calls} encoder passes of {@code tokens} tokens (interval and run alike). */
    private static Snapshot withEncodes(Snapshot s, long calls, long tokens) {
        return s.withFigures(f -> {
            TokenTotals t = f.tokens();
            return f.withTokens(new TokenTotals(t.decodeCalls(), t.prefillCalls(),
                    t.decodeStepCalls(), t.failedCalls(), t.tokensPrefill(), t.tokensDecode(), t.prefillBusyNs(),
                    t.decodeBusyNs(), t.contexts(), t.requests(), t.activeRequests(), t.batchesUnread(),
                    t.batchSizes(), t.sequences(), t.speculative(), calls, tokens));
        });
    }

    /** Where llama_decode is not called: the counters are the graphs', and the source label says so. */
    @Test
    void theTokenSourceAndTheGraphsTokensAreExposed() throws IOException {
        Snapshot graphs = Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withTokens(f.tokens().withSource(
                TokenSource.GRAPHS, new GraphTokenCounts(101, 260, 93, 101, 0))));
        String text = openMetrics(frame(graphs));
        assertLine(text, "infertop_token_source_info{source=\"graphs\"} 1");
        assertLine(text, "infertop_graph_prefill_tokens_total 260.0");
        assertLine(text, "infertop_graph_decode_tokens_total 93.0");
        assertLine(openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON))),
                "infertop_token_source_info{source=\"api\"} 1");
    }

    @Test
    void encodeCallsAndTokensAreCountersApartFromTheDecodeCalls() throws IOException {
        String text = openMetrics(frame(withEncodes(Fixtures.snapshot(LayerStatus.State.ON), 4, 96)));
        assertLine(text, "# TYPE infertop_encode_calls counter");
        assertLine(text, "infertop_encode_calls_total 4.0");
        assertLine(text, "# TYPE infertop_encode_tokens counter");
        assertLine(text, "infertop_encode_tokens_total 96.0");
        assertLine(text, "infertop_encode_calls_created 1700000000.000");
        assertLine(text, "infertop_decode_calls_total 70.0");
        assertLine(text, "infertop_prefill_tokens_total 64.0");
        assertLine(text, "infertop_decode_tokens_total 69.0");
        // An encoder pass costs an entry + return pair like a decode call: 13 701 600 + 4 × 2 × 800 ns of 1 s.
        assertLine(text, "infertop_probe_cost_ratio 0.013708");
        String none = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertLine(none, "infertop_encode_calls_total 0.0");
        assertLine(none, "infertop_encode_tokens_total 0.0");
    }

    @Test
    void probeCostIsTheEstimateOverTheLastInterval() throws IOException {
        // No budget estimate, no measured hit cost: the records' hits at HitCost.DEFAULT (800 ns). 70 decode calls
        // + 70 backend computes + 70 CPU graph computes, entry + return: 420 hits; 3 threads × 5500 node groups and
        // 69 graphs × 3 threads: 16 707 hits; 17 127 × 800 = 13 701 600 ns of a 1 s interval.
        assertLine(openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON))), "infertop_probe_cost_ratio 0.0137016");
    }

    @Test
    void histogramsCountTheRunsHdrHistogramsIntoFixedBuckets() throws IOException {
        String text = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertLine(text, "# TYPE infertop_tpot_seconds histogram");
        assertLine(text, "# UNIT infertop_tpot_seconds seconds");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"0.002\"} 0");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"0.005\"} 9");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"0.01\"} 9");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"0.02\"} 69");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"+Inf\"} 69");
        assertLine(text, "infertop_tpot_seconds_count 69");
        assertLine(text, "infertop_ttft_seconds_bucket{le=\"0.01\"} 0");
        assertLine(text, "infertop_ttft_seconds_bucket{le=\"0.02\"} 1");
        assertLine(text, "infertop_ttft_seconds_count 1");
        // Ops: labelled by op and backend; the sum is the op's exact wall time (600 ms in the fixture).
        assertLine(text, "infertop_op_duration_seconds_bucket{backend=\"CPU\",op=\"MUL_MAT\",le=\"2.0E-5\"} 0");
        assertLine(text, "infertop_op_duration_seconds_bucket{backend=\"CPU\",op=\"MUL_MAT\",le=\"5.0E-5\"} 1000");
        assertLine(text, "infertop_op_duration_seconds_bucket{backend=\"CPU\",op=\"MUL_MAT\",le=\"1.0E-4\"} 1000");
        assertLine(text, "infertop_op_duration_seconds_bucket{backend=\"CPU\",op=\"MUL_MAT\",le=\"2.0E-4\"} 4000");
        assertLine(text, "infertop_op_duration_seconds_count{backend=\"CPU\",op=\"MUL_MAT\"} 4000");
        assertLine(text, "infertop_op_duration_seconds_sum{backend=\"CPU\",op=\"MUL_MAT\"} 0.6");
        // An op without a run histogram in the frame (none recorded yet) gets no series.
        assertFalse(text.contains("infertop_op_duration_seconds_count{backend=\"CPU\",op=\"SOFT_MAX\"}"), text);
        // The clock samples per op, window or not (the run's: the fixture's 640 and 160).
        assertLine(text, "infertop_op_samples_total{backend=\"CPU\",op=\"MUL_MAT\"} 640.0");
        assertLine(text, "infertop_op_samples_total{backend=\"CPU\",op=\"SOFT_MAX\"} 160.0");
        // The TPOT sum is the run's HdrHistogram mean times its count, as the snapshot has them: 69 × 14.5 ms.
        double sum = text.lines().filter(l -> l.startsWith("infertop_tpot_seconds_sum "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst().orElseThrow();
        assertEquals(1.0005, sum, 1e-12);
    }

    @Test
    void targetInfoCarriesSanitisedIdentity() throws IOException {
        Snapshot snapshot = Fixtures.snapshot(LayerStatus.State.ON);
        Snapshot hostile = new Snapshot(snapshot.sequence(), RunState.EXITED,
                new TargetInfo(4242, "llama\u001b]0;pwned\u0007", "/m/x\n.gguf", List.of()), snapshot.interval(),
                snapshot.total(), 3, snapshot.layers(), snapshot.moe());
        String text = openMetrics(frame(hostile));
        // The writer escapes the backslash of each \xNN once more, as the format wants; Prometheus reads \x1b.
        assertLine(text, "infertop_target_info{command=\"llama\\\\x1b]0;pwned\\\\x07\",llama_cpp_build=\"7c3dfb36\","
                + "model=\"/m/x\\\\x0a.gguf\",pid=\"4242\"} 1");
        assertLine(text, "infertop_target_running 0.0");
        assertLine(text, "infertop_lost_events_total 3.0");
    }

    /**
     * A backslash in a label value is kept by the sanitiser and escaped once, as {@code \\}, by the exposition
     * format (both of them), which Prometheus reads back as one backslash; the man page says the same.
     */
    @Test
    void aBackslashIsEscapedOnceByTheExpositionFormatAndTheManPageSaysSo() throws IOException {
        Snapshot snapshot = Fixtures.snapshot(LayerStatus.State.ON);
        Snapshot windows = new Snapshot(snapshot.sequence(), RunState.RUNNING,
                new TargetInfo(4242, "llama-server", "D:\\models\\q4.gguf", List.of()), snapshot.interval(),
                snapshot.total(), 0, snapshot.layers(), snapshot.moe());
        String model = "model=\"D:\\\\models\\\\q4.gguf\"";
        assertTrue(openMetrics(frame(windows)).contains(model), openMetrics(frame(windows)));
        assertTrue(prometheusText(frame(windows)).contains(model), prometheusText(frame(windows)));
        String manPage = java.nio.file.Files.readString(java.nio.file.Path.of("man/infertop.1"));
        String labels = manPage.substring(manPage.indexOf("Label values that come from the target"));
        labels = labels.substring(0, labels.indexOf(".TP"));
        assertFalse(labels.contains("x5c"), labels);
        assertTrue(labels.contains("a backslash is kept as it is"), labels);
    }

    @Test
    void moeSelectionsPerLayerAndExpertWhileTheLayerIsOn() throws IOException {
        long[][] prefill = {{3, 1}, {0, 4}};
        long[][] decode = {{1, 1}, {2, 0}};
        MoeTotals moe = new MoeTotals(true, 10, 1, prefill, decode, new long[2], new long[2], prefill, decode,
                new long[] {4, 4}, new long[] {2, 2}, new long[2], List.of(), new double[] {0, 0}, 16384, 8, 0, 0, 0, 0,
                64, 0);
        String text = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON).withMoe(moe)));
        assertLine(text, "infertop_moe_expert_selections_total{expert=\"0\",layer=\"0\"} 4.0");
        assertLine(text, "infertop_moe_expert_selections_total{expert=\"1\",layer=\"0\"} 2.0");
        assertLine(text, "infertop_moe_expert_selections_total{expert=\"0\",layer=\"1\"} 2.0");
        assertLine(text, "infertop_moe_expert_selections_total{expert=\"1\",layer=\"1\"} 4.0");
    }

    @Test
    void theOperatorLayerOffLeavesNoOpOrThreadSeries() throws IOException {
        String text = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.OFF)));
        assertFalse(text.contains("infertop_op_duration_seconds"), text);
        assertFalse(text.contains("thread=\""), text);
        assertLine(text, "infertop_decode_tokens_total 69.0");
    }

    /**
     * Found by RecordStreamFuzzTest: a thread's work summed from corrupt arrival times wrapped negative, the client
     * refused the counter, and no frame was built again for the rest of the run. The wrapped series reads 0, every
     * other series its value.
     */
    @Test
    void aCounterThatWrappedNegativeReadsZeroAndTheFrameIsStillBuilt() throws IOException {
        Snapshot wrapped = Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withBackends(
                List.of(new BackendTotals("CPU", 490, 301_000, Long.MIN_VALUE + 7)), List.of()));
        String text = openMetrics(frame(wrapped));
        assertLine(text, "infertop_graph_busy_seconds_total{backend=\"CPU\"} 0.0");
        assertLine(text, "infertop_graph_computes_total{backend=\"CPU\"} 490.0");
        assertLine(text, "infertop_decode_tokens_total 69.0");
    }

    /** Every family the mapping can produce is in the man page, and the mapping produces no other. */
    @Test
    void theManPageDocumentsEveryMetric() throws IOException {
        String manPage = java.nio.file.Files.readString(java.nio.file.Path.of("man/infertop.1"));
        long[][] counts = {{1}};
        MoeTotals moe = new MoeTotals(true, 10, 1, counts, counts, new long[1], new long[1], counts, counts,
                new long[1], new long[1], new long[1], List.of(), new double[1], 16384, 1, 0, 0, 0, 0, 8, 0);
        Snapshot traced = Fixtures.snapshot(LayerStatus.State.ON)
                .withFigures(f -> f.withOffload(OffloadFixtures.offload()).withWhisper(WHISPER)
                        .withBackendOps(List.of(new BackendOps("Vulkan", 30, 1_000_000, List.of(
                                new BackendOps.Op("MUL_MAT", 30, 0, false)),
                                OffloadFixtures.nodeDispatch()))));
        Snapshot estimated = traced.withFigures(f -> f.withOperators(f.operators().withEstimated(
                List.of(new OpEstimate("MUL_MAT", 480, 12_500_000)))));
        String text = openMetrics(frame(estimated.withMoe(moe)
                .withBudget(new BudgetStatus(1, 0.8, 2.5, 0.25, "1.0 s of every 4.0 s"))));
        assertLine(text, "infertop_op_estimated_groups_total{backend=\"CPU\",op=\"MUL_MAT\"} 480.0");
        assertLine(text, "infertop_op_estimated_seconds_total{backend=\"CPU\",op=\"MUL_MAT\"} 0.0125");
        assertLine(text, "infertop_overhead_estimate_ratio 0.008");
        assertLine(text, "infertop_operator_sampled_ratio 0.25");
        // 30 graphs followed: 30 MUL_MAT and 10 ADD dispatched, 20 ADD fused into the MUL_MATs' dispatches
        assertLine(text, "infertop_backend_node_dispatches_total{backend=\"Vulkan\",op=\"ADD\"} 10.0");
        assertLine(text, "infertop_backend_node_dispatches_total{backend=\"Vulkan\",op=\"MUL_MAT\"} 30.0");
        assertLine(text, "infertop_backend_fused_nodes_total{backend=\"Vulkan\",op=\"ADD\"} 20.0");
        java.util.Set<String> families = new java.util.TreeSet<>();
        text.lines().filter(l -> l.startsWith("# TYPE ")).forEach(l -> {
            String[] parts = l.split(" ");
            families.add(parts[2] + switch (parts[3]) {
                case "counter" -> "_total";
                case "info" -> "_info";
                default -> "";
            });
        });
        assertEquals(new java.util.TreeSet<>(MetricsMapping.NAMES), families);
        java.util.Set<String> documented = new java.util.TreeSet<>(ManPage.tagNames(
                ManPage.section(manPage, "PROMETHEUS METRICS")));
        assertEquals(new java.util.TreeSet<>(MetricsMapping.NAMES), documented,
                "man/infertop.1 PROMETHEUS METRICS (its .TP entries) against the metrics the mapping produces");
    }

    /** Each metric's entry names the JSON field it mirrors: a field JsonSchema declares. */
    @Test
    void theMetricsJsonReferencesAreDeclaredFields() {
        String section = ManPage.section(ManPage.text(), "PROMETHEUS METRICS");
        // The entries only: the paragraphs after them speak of the histograms' own JSON figures (count, mean).
        String entries = section.substring(section.indexOf("\n.TP\n"), section.indexOf("\n.PP\n",
                section.indexOf("\n.TP\n")));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("JSON\\s+\\\\fB([^\\\\]+)").matcher(entries);
        java.util.List<String> referenced = new java.util.ArrayList<>();
        while (m.find()) {
            referenced.add(m.group(1).split("\\.")[0].strip());
        }
        assertTrue(referenced.size() >= 10, "JSON references found: " + referenced);
        for (String field : referenced) {
            assertTrue(JsonSchema.ofKey(field) != null, "PROMETHEUS METRICS refers to JSON " + field
                    + ", which JsonSchema does not declare");
        }
    }

    @Test
    void beforeAnyTargetTheExpositionIsEmpty() throws IOException {
        assertEquals("# EOF\n", openMetrics(null));
    }

    @Test
    void thePrometheusTextFormatHasTheSameValuesWithoutCreatedLines() throws IOException {
        String text = prometheusText(frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertLine(text, "# TYPE infertop_decode_tokens_total counter");
        assertLine(text, "infertop_decode_tokens_total 69.0");
        assertLine(text, "infertop_tpot_seconds_bucket{le=\"0.02\"} 69");
        assertLine(text, "# TYPE infertop_target_info gauge");
        assertFalse(text.contains("_created"), text);
        assertFalse(text.contains("# EOF"), text);
    }

    /**
     * The counters whose man page entry names the JSON field they mirror, with that field's value in the final JSON
     * line of the same snapshot (seconds from milliseconds where the field is in ms; a label's value is the key of
     * the field's object). The mapping reads the model, not the JSON: this is where the two are held together.
     */
    private static final List<String[]> MIRRORED = List.of(
            new String[] {"infertop_prefill_tokens_total", "", JsonSchema.TOKENS_PREFILL.key()},
            new String[] {"infertop_decode_tokens_total", "", JsonSchema.TOKENS_DECODE.key()},
            new String[] {"infertop_decode_calls_total", "", JsonSchema.DECODE_CALLS.key()},
            new String[] {"infertop_encode_calls_total", "", JsonSchema.ENCODE_CALLS.key()},
            new String[] {"infertop_encode_tokens_total", "", JsonSchema.ENCODE_TOKENS.key()},
            new String[] {"infertop_lost_events_total", "", JsonSchema.LOST_EVENTS.key()},
            new String[] {"infertop_graph_computes_total", "backend", JsonSchema.GRAPH_COMPUTES.key()},
            new String[] {"infertop_graph_busy_seconds_total", "backend", JsonSchema.GRAPH_BUSY_MS.key()},
            new String[] {"infertop_barrier_wait_seconds_total", "thread",
                    JsonSchema.THREADS.key() + "." + JsonSchema.ThreadField.BARRIER_WAIT_MS.key()},
            new String[] {"infertop_thread_work_seconds_total", "thread",
                    JsonSchema.THREADS.key() + "." + JsonSchema.ThreadField.WORK_MS.key()});

    /**
     * Fields the man page names beside a metric that no value comparison above covers, each with why: the
     * histograms count the frame's HdrHistograms (not the JSON's percentiles), the MoE, budget and sampled figures
     * are held to the exposition by their own tests above, whisper's by its own test below.
     */
    private static final Set<String> NAMED_NOT_COMPARED = Set.of(JsonSchema.TTFT_MS.key(), JsonSchema.TPOT_MS.key(),
            JsonSchema.OPS.key(), JsonSchema.OPS_ESTIMATED.key(), JsonSchema.MOE.key(), JsonSchema.LIMITS.key(),
            JsonSchema.BUDGET.key(), JsonSchema.SAMPLED.key(), JsonSchema.OFFLOAD.key(),
            // Three levels deep (ops_sampled.ops.OP.samples): compared in histogramsCount... with the fixture's.
            JsonSchema.OPS_SAMPLED.key(),
            // The token source is a label (theTokenSourceAndTheGraphsTokensAreExposed compares it and graph_tokens).
            JsonSchema.TOKEN_SOURCE.key(), JsonSchema.GRAPH_TOKENS.key(),
            JsonSchema.WHISPER.key(),
            // Two labels deep (backends.B.dispatch.ops.OP): theNodeDispatchMetricsMirrorTheBackendsJson.
            JsonSchema.BACKENDS.key());

    /** The node-dispatch counters against backends.*.dispatch.ops of the same snapshot; none without dispatch. */
    @Test
    void theNodeDispatchMetricsMirrorTheBackendsJson() throws IOException {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withBackendOps(List.of(
                new BackendOps("Vulkan", 30, 1_000_000, List.of(
                        new BackendOps.Op("MUL_MAT", 30, 0, false)),
                        OffloadFixtures.nodeDispatch()),
                new BackendOps("CUDA", 3, 1_000_000, List.of(
                        new BackendOps.Op("MUL_MAT", 3, 0, false))))));
        String text = openMetrics(frame(s));
        com.fasterxml.jackson.databind.JsonNode ops = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(JsonLinesView.toJson(s)).get(JsonSchema.BACKENDS.key()).get("Vulkan")
                .get(JsonSchema.BackendField.DISPATCH.key()).get(JsonSchema.BackendDispatchField.OPS.key());
        int compared = 0;
        for (java.util.Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> it = ops.fields();
             it.hasNext(); compared++) {
            Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> op = it.next();
            assertLine(text, "infertop_backend_node_dispatches_total{backend=\"Vulkan\",op=\"" + op.getKey() + "\"} "
                    + op.getValue().get(JsonSchema.BackendDispatchOpField.DISPATCHES.key()).asDouble());
            assertLine(text, "infertop_backend_fused_nodes_total{backend=\"Vulkan\",op=\"" + op.getKey() + "\"} "
                    + op.getValue().get(JsonSchema.BackendDispatchOpField.FUSED.key()).asDouble());
        }
        assertEquals(2, compared);
        assertFalse(text.contains("backend=\"CUDA\",op="), "CUDA was not followed node by node: no series");
    }

    /** The offload metrics against the offload JSON of the same snapshot (NAMED_NOT_COMPARED: offload). */
    @Test
    void theOffloadMetricsMirrorTheOffloadJsonAndSayWhatIsUnknown() throws IOException {
        OffloadTotals offload = OffloadFixtures.offload();
        OffloadTotals withEnqueueOnly = new OffloadTotals(
                java.util.stream.Stream.concat(offload.backends().stream(), java.util.stream.Stream.of(
                        new OffloadTotals.Backend("CUDA",
                                OffloadTotals.Completion.ENQUEUE_ONLY, 3, 1_000_000, 0, 0, 0, 0,
                                0, 0, 0, 0))).toList(), offload.copies(), 0);
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withOffload(withEnqueueOnly));
        String text = openMetrics(frame(s));
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(JsonLinesView.toJson(s)).get(JsonSchema.OFFLOAD.key())
                .get(JsonSchema.OffloadField.BACKENDS.key());
        assertLine(text, "infertop_backend_completion{backend=\"Vulkan\",completion=\"device-complete\"} 1.0");
        assertLine(text, "infertop_backend_completion{backend=\"CUDA\",completion=\"enqueue only\"} 1.0");
        assertLine(text, "infertop_backend_device_complete_seconds_total{backend=\"Vulkan\"} "
                + json.get("Vulkan").get("device_complete_ms").asDouble() / 1e3);
        assertFalse(text.contains("infertop_backend_device_complete_seconds_total{backend=\"CUDA\"}"), text);
        assertFalse(json.get("CUDA").has("device_complete_ms"));
        assertLine(text, "infertop_backend_host_wait_seconds_total{backend=\"Vulkan\"} "
                + json.get("Vulkan").get("host_wait_ms").asDouble() / 1e3);
        assertLine(text, "infertop_backend_copied_in_bytes_total{backend=\"Vulkan\"} "
                + json.get("Vulkan").get("bytes_in").asDouble());
    }

    /** The exposition's samples of {@code metric}: label value (or "" without a label) to value. */
    private static Map<String, Double> samples(String exposition, String metric, String label) {
        Map<String, Double> values = new java.util.TreeMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + java.util.regex.Pattern.quote(metric)
                + "(?:\\{" + (label.isEmpty() ? "" : label + "=\"([^\"]*)\"") + "\\})? (?<v>\\S+)$").matcher(exposition);
        while (m.find()) {
            values.put(label.isEmpty() ? "" : m.group(1), Double.parseDouble(m.group("v")));
        }
        return values;
    }

    /** The final JSON line's values of {@code field} ("object.inner": each key's inner field), as samples() keys them. */
    private static Map<String, Double> jsonValues(com.fasterxml.jackson.databind.JsonNode line, String field) {
        Map<String, Double> values = new java.util.TreeMap<>();
        String[] path = field.split("\\.");
        com.fasterxml.jackson.databind.JsonNode node = line.path(path[0]);
        double scale = field.endsWith("_ms") ? 1e-3 : 1;
        if (node.isValueNode()) {
            values.put("", node.asDouble() * scale);
        } else {
            node.fields().forEachRemaining(e -> values.put(e.getKey(),
                    (path.length > 1 ? e.getValue().path(path[1]) : e.getValue()).asDouble() * scale));
        }
        return values;
    }

    @Test
    void theCountersMirrorTheJsonFieldsTheManPageNames() throws Exception {
        Snapshot s = withEncodes(Fixtures.snapshot(LayerStatus.State.ON), 4, 96).withState(RunState.EXITED);
        String exposition = openMetrics(frame(s));
        com.fasterxml.jackson.databind.JsonNode line = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(JsonLinesView.toJsonNode(s, true).toString());
        for (String[] mirrored : MIRRORED) {
            Map<String, Double> json = jsonValues(line, mirrored[2]);
            Map<String, Double> metric = samples(exposition, mirrored[0], mirrored[1]);
            assertFalse(json.isEmpty(), mirrored[2] + ": the fixture has no value to compare");
            assertEquals(json.keySet(), metric.keySet(), mirrored[0] + " against JSON " + mirrored[2]);
            for (Map.Entry<String, Double> value : json.entrySet()) {
                // The JSON rounds milliseconds to 3 decimals: a microsecond either way.
                assertEquals(value.getValue(), metric.get(value.getKey()), 1.5e-6,
                        mirrored[0] + "{" + value.getKey() + "} against JSON " + mirrored[2]);
            }
        }
        // Every field the man page names beside a metric is compared above, or listed as not comparable.
        String section = ManPage.section(ManPage.text(), "PROMETHEUS METRICS");
        // The entries only, as above: the paragraphs after them speak of the histograms' own figures.
        String entries = section.substring(section.indexOf("\n.TP\n"), section.indexOf("\n.PP\n",
                section.indexOf("\n.TP\n")));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("JSON\\s+\\\\fB([^\\\\]+)").matcher(entries);
        Set<String> compared = new java.util.TreeSet<>();
        MIRRORED.forEach(e -> compared.add(e[2].split("\\.")[0]));
        while (m.find()) {
            String field = m.group(1).split("\\.")[0].strip();
            assertTrue(compared.contains(field) || NAMED_NOT_COMPARED.contains(field),
                    "PROMETHEUS METRICS names JSON " + field + " beside a metric; no value comparison covers it");
        }
    }
    /** A whisper.cpp program's run: 2 transcriptions of 3 s each in 4 s, 2 encoder passes, 21 decoder calls of 66 tokens. */
    static final WhisperTotals WHISPER = new WhisperTotals(2, 0, 96_000, 0,
            4_000_000_000L, 2, 21, 66);

    /**
     * whisper.cpp's units are counters of their own, for a whisper.cpp program, equal to the JSON's {@code whisper}
     * figures; a llama.cpp program has none of them.
     */
    @Test
    void aWhisperProgramsUnitsAreItsOwnCountersEqualToTheJson() throws Exception {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withWhisper(WHISPER))
                .withState(RunState.EXITED);
        String exposition = openMetrics(frame(s));
        assertLine(exposition, "infertop_whisper_transcriptions_total 2.0");
        assertLine(exposition, "infertop_whisper_audio_seconds_total 6.0");
        assertLine(exposition, "infertop_whisper_transcribing_seconds_total 4.0");
        assertLine(exposition, "infertop_whisper_encoder_passes_total 2.0");
        assertLine(exposition, "infertop_whisper_decoder_calls_total 21.0");
        assertLine(exposition, "infertop_whisper_decoder_tokens_total 66.0");
        com.fasterxml.jackson.databind.JsonNode whisper = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(JsonLinesView.toJsonNode(s, true).toString()).path(JsonSchema.WHISPER.key());
        assertEquals(2, whisper.path(JsonSchema.WhisperField.TRANSCRIPTIONS.key()).asLong());
        assertEquals(6.0, whisper.path(JsonSchema.WhisperField.AUDIO_S.key()).asDouble());
        assertEquals(1.5, whisper.path(JsonSchema.WhisperField.REAL_TIME_FACTOR.key()).asDouble());
        assertEquals(66, whisper.path(JsonSchema.WhisperField.DECODER_TOKENS.key()).asLong());
        String llama = openMetrics(frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertFalse(llama.contains("# TYPE infertop_whisper_"), llama);
    }
}
