package dev.infertop.it;

import dev.infertop.workload.LlamaCppWorkload;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real llama-server as the oracle: the provisioned source build with 4 parallel slots on the bench model
 * (245 M), fed 8 concurrent {@code /completion} requests of different prompt lengths from this test (loopback,
 * bounded in count and time). infertop, attached with {@code -p}, must tell the server's continuous batching
 * apart: its prompt tokens are the server's {@code prompt_tokens_total} exactly, its decoded generated tokens
 * the server's {@code tokens_predicted_total} less one per request (a request's last token is sampled, never
 * decoded), its requests the 8 completed, and per-request TTFT and TPOT agree with the server's own timings.
 * The live view on the same kind of server shows a non-zero decode rate (it showed 0.0 tok/s while batches of
 * several slots were taken for prompts) and, on r, the slots. A node-llama-cpp chat is counted as the client
 * counts it.
 */
class ServingIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final int REQUESTS = 8;
    static final int PREDICT = 32;
    /**
     * A round of {@link #REQUESTS} on the bench model takes seconds on a quiet machine; beside a busy loop per core
     * ggml's two threads rarely run at once (each barrier waits for the other's next time slice), and one round took
     * over two minutes.
     */
    static final int REQUEST_TIMEOUT_S = 360;
    private static final Pattern DECODING = Pattern.compile("decode +[1-9][0-9.]* tok/s");

    static Path server;
    static Path model;
    private Process llamaServer;
    private TmuxPane pane;

    @BeforeAll
    static void requirements() {
        server = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-server");
        model = Models.preset("bench");
    }

    @AfterEach
    void stop() throws Exception {
        if (pane != null) {
            pane.close();
        }
        if (llamaServer != null) {
            llamaServer.destroyForcibly();
            llamaServer.waitFor(10, TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }

    @Test
    void continuousBatchingIsCountedPerSequenceLikeTheServerCountsIt() throws Exception {
        int port = startServer();
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "-p",
                Long.toString(llamaServer.pid()))) {
            infertop.awaitStderr("probes attached", 60);
            // The requests start at once: the budget's first window (2 s of every graph) begins at the attach and
            // is what teaches the sampler the server's code; requests sent 1.5 s later left it half a second of
            // graphs, and three quarters of the samples unknown.
            Thread.sleep(200);
            List<JsonNode> timings = completions(port);
            Map<String, Double> metrics = metrics(port);
            Thread.sleep(2500); // two more intervals: every record is drained
            // SIGTERM with kill (Process.destroy() would also close our end of its stdout): the final object.
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            JsonNode requests = total.path("requests");
            String context = "infertop: " + total + "\nserver: " + metrics + "\ntimings: " + timings;

            assertEquals(metrics.get("llamacpp:prompt_tokens_total").longValue(), total.path("tokens_prefill").asLong(),
                    "prompt tokens: " + context);
            assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue() - REQUESTS,
                    total.path("tokens_decode").asLong(), "generated tokens decoded: " + context);
            assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue(),
                    requests.path("generated_tokens").asLong(), "tokens the requests generated: " + context);
            assertEquals(metrics.get("llamacpp:n_decode_total").longValue(), total.path("decode_calls").asLong(),
                    "llama_decode calls: " + context);
            assertEquals(REQUESTS, requests.path("count").asLong(), "requests: " + context);
            // The graphs beside the API: they carry no sequence ids, so a batch of several slots' steps cannot be
            // split into prompt and generated tokens per sequence, but every token the server computed is counted
            // once, and the requests are unknown to them (never guessed).
            JsonNode graphs = total.path("graph_tokens");
            System.out.println("serving: graphs " + graphs + "; api " + total.path("tokens_prefill") + " + "
                    + total.path("tokens_decode"));
            assertEquals(total.path("tokens_prefill").asLong() + total.path("tokens_decode").asLong(),
                    graphs.path("prompt_tokens").asLong() + graphs.path("generated_tokens").asLong(),
                    "every token computed, by the graphs: " + context);
            assertTrue(graphs.path("requests").isNull(), "several sequences a graph: requests unknown: " + context);
            assertEquals(0, requests.path("batches_unread").asLong(), context);
            assertEquals(REQUESTS, requests.path("ttft_ms").path("count").asLong(), "one TTFT per request: " + context);
            assertEquals(REQUESTS * (PREDICT - 1L), requests.path("tpot_ms").path("count").asLong(),
                    "a TPOT sample between each two outputs of a request: " + context);

            // Means, because the server reports each request's average TPOT, not its samples. TTFT: the server's
            // prompt_ms runs from the prompt's first batch to its logits, as infertop's does from the decode call's
            // start; slots that wait for a busy batch make both longer alike.
            double serverTtft = timings.stream().mapToDouble(t -> t.path("prompt_ms").asDouble()).average().orElseThrow();
            double serverTpot = metrics.get("llamacpp:tokens_predicted_seconds_total") * 1000
                    / metrics.get("llamacpp:tokens_predicted_total");
            double ttft = requests.path("ttft_ms").path("mean").asDouble();
            double tpot = requests.path("tpot_ms").path("mean").asDouble();
            System.out.printf("serving: TTFT mean infertop %.2f ms, server %.2f ms; TPOT mean infertop %.3f ms, "
                    + "server %.3f ms; decode %.1f tok/s%n", ttft, serverTtft, tpot, serverTpot,
                    total.path("decode_tokens_per_s").asDouble());
            assertTrue(Math.abs(ttft - serverTtft) <= 0.25 * serverTtft + 2, "TTFT mean: " + context);
            assertTrue(Math.abs(tpot - serverTpot) <= 0.25 * serverTpot + 0.5, "TPOT mean: " + context);
            assertTrue(total.path("decode_tokens_per_s").asDouble() > 0, context);

            // TTFT's median too (one sample per request on both sides): HdrHistogram's p50 is the lower median (the
            // 4th of 8 values), taken the same way from the server's per-response timings. Not TPOT's: the server
            // gives each request's mean per token, infertop's samples are the tokens themselves (a token that waited
            // for another slot's prompt batch weighs in once, not averaged into its request), so only their means
            // (every request has PREDICT tokens) are the same quantity.
            double serverTtftMedian = lowerMedian(timings.stream().mapToDouble(t -> t.path("prompt_ms").asDouble()));
            double ttftMedian = requests.path("ttft_ms").path("p50").asDouble();
            System.out.printf("serving: TTFT median infertop %.2f ms, server %.2f ms%n", ttftMedian, serverTtftMedian);
            assertTrue(Math.abs(ttftMedian - serverTtftMedian) <= 0.25 * serverTtftMedian + 2, "TTFT p50: " + context);
            assertBusyAtMostTheInterval(infertop.jsonLines());
            assertTheSamplesNameTheServersWork(total, infertop.stderrText());
        }
    }

    /**
     * The clock sampler on a server under the default budget: its HTTP and slot threads' code is outside graphs,
     * its compute threads' is named by what the windows taught, and the samples (window or not) lead with MUL_MAT
     * as the windows' exact work does. (The prompts and decode steps of 4 slots mix differently from second to
     * second, and the windows are a few: the shares are printed beside the exact ones, not held to them.)
     */
    /** With every graph traced, the samples' op shares are those of the same run's exact work time (OpSamplerIT). */
    static void assertTheSamplesGiveTheExactShares(JsonNode total, double waited) {
        JsonNode sampled = total.path("ops_sampled");
        Map<String, Double> exact = OpSamplerIT.exactShares(total);
        Map<String, Double> shares = OpSamplerIT.sampledShares(sampled.path("ops"));
        System.out.println("serving, every graph: samples " + sampled.path("samples") + " (unknown "
                + sampled.path("unknown") + "); sampled shares " + shares + "; exact " + exact);
        assertTrue(sampled.path("samples").asLong() >= 100, "the sampler ran on the server: " + sampled);
        assertTrue(sampled.path("period_ms").asDouble() > 0, "the run's figures keep the sampler's period: " + sampled);
        double named = shares.isEmpty() ? 0 : sampled.path("samples").asLong() - sampled.path("unknown").asDouble()
                - sampled.path("barrier_wait").asDouble() - sampled.path("outside_graphs").asDouble();
        if (waited > OpSamplerIT.MAX_PRESSURE) {
            // Other work took the cores now and then: a preempted op's exact time holds the wait, its samples do
            // not (a thread off its CPU is not sampled); measured above, not compared (OpSamplerIT's rule).
            System.out.println("serving: the shares are not compared: tasks waited for a CPU "
                    + Math.round(100 * waited) + " % of the run (other work on this machine)");
            return;
        }
        for (Map.Entry<String, Double> op : exact.entrySet()) {
            if (op.getValue() >= 0.02) {
                double p = op.getValue();
                // A few hundred samples on the tiny model: three standard errors of a share, and the traps' time,
                // which the exact work holds and the samples (user time only) do not.
                double points = 300 * Math.sqrt(p * (1 - p) / Math.max(1, named)) + SAMPLED_SHARE_POINTS;
                double other = shares.getOrDefault(op.getKey(), 0.0);
                assertTrue(Math.abs(p - other) * 100 <= points, op.getKey() + ": exact " + p + " vs sampled " + other
                        + " (tolerance " + points + " points over " + named + " samples): " + shares + " vs " + exact);
            }
        }
    }

    /** Beside the samples' standard error: the barrier traps' time in the exact small ops, in points. */
    static final double SAMPLED_SHARE_POINTS = 2;

    static void assertTheSamplesNameTheServersWork(JsonNode total, String stderr) {
        JsonNode sampled = total.path("ops_sampled");
        long samples = sampled.path("samples").asLong();
        Map<String, Double> exact = new java.util.TreeMap<>(OpSamplerIT.exactShares(total));
        exact.replaceAll((op, share) -> Math.round(1000 * share) / 1000.0);
        Map<String, Double> shares = OpSamplerIT.sampledShares(sampled.path("ops"));
        System.out.println("serving: samples " + samples + " (unknown " + sampled.path("unknown") + ", outside graphs "
                + sampled.path("outside_graphs") + ", between windows " + sampled.path("between_windows").path("samples")
                + "); sampled shares " + shares + "; exact " + exact);
        assertTrue(samples >= 200, "the sampler ran on the server: " + sampled);
        String context = sampled + "\nexact " + exact + "\nlayers " + total.path("layers") + "\nbudget "
                + total.path("budget") + "\nsampled graphs " + total.path("sampled") + "\ninfertop's stderr: " + stderr;
        // The defaults' windows are few and the first falls mostly on the 4 slots' prompts, whose code the decode
        // steps share only partly: a share of the samples stays unknown (never guessed), but the windows taught some.
        assertTrue(sampled.path("unknown").asDouble() <= 0.75 * samples, "the windows taught lines: " + context);
        String top = sampled.path("ops").properties().iterator().next().getKey();
        assertEquals("MUL_MAT", top, "most samples in MUL_MAT: " + context);
        assertTrue(shares.get("MUL_MAT") >= 0.5 && exact.getOrDefault("MUL_MAT", 0.0) >= 0.5,
                "MUL_MAT leads both: sampled " + shares + ", exact " + exact);
    }

    /**
     * The server computes its graphs on one thread: each backend's busy time in an interval is at most the
     * interval (a graph spanning a tick is split across the two intervals), within the JSON's rounding (span to
     * the ms). It showed 118 % and 123 % of a 1 s interval while prompts of several slots ran across ticks.
     */
    static void assertBusyAtMostTheInterval(List<JsonNode> lines) {
        int intervals = 0;
        double highest = 0;
        for (JsonNode line : lines) {
            if (!line.path("scope").asText().equals("interval")) {
                continue;
            }
            double spanMs = line.path("span_s").asDouble() * 1000;
            List<Map.Entry<String, JsonNode>> busy = new ArrayList<>(line.path("graph_busy_ms").properties());
            busy.add(Map.entry("cpu path", line.path("cpu_graph_busy_ms")));
            for (Map.Entry<String, JsonNode> backend : busy) {
                double ms = backend.getValue().asDouble();
                highest = Math.max(highest, ms / spanMs);
                assertTrue(ms <= spanMs + 1, backend.getKey() + " busy " + ms + " ms in an interval of " + spanMs
                        + " ms: " + line);
            }
            intervals++;
        }
        System.out.printf("serving: busy share per backend at most %.1f%% over %d intervals%n", 100 * highest,
                intervals);
        assertTrue(intervals >= 3, "intervals: " + intervals);
        assertTrue(highest > 0.5, "the graphs kept the server busy in some interval: " + highest);
    }

    /**
     * Decode steps of any size on a 4-slot server (the tiny model, --budget 0 so every step's graph is costed):
     * each batch size's steps read the weights once, as the GGUF's tensor table says a token's graph reads them
     * (within 1 %), per generated token that over the batch; their KV bytes are their sequences' context lengths
     * times the cache's bytes per position, which equal the GGUF's (layers × K and V widths × 2 bytes of F16)
     * within 5 %; the context lengths infertop read from the batches, over every decoded generated token, are the
     * server's (each request's prompt_n + 1 + j for its j-th decoded token) within 5 %; each size has a verdict
     * against the machine's ceilings.
     */
    @Test
    void decodeStepsOfEverySizeReadTheWeightsOnceAndEachSequencesKvCells(@org.junit.jupiter.api.io.TempDir Path work)
            throws Exception {
        Path tiny = Models.preset("tiny");
        List<GgufTensors.Tensor> tensors = GgufTensors.read(tiny);
        long weights = GgufTensors.decodeTokenWeightBytes(tensors, 0);
        // The F16 cache: one K and one V row of each layer per position.
        long kvBytesPerPosition = tensors.stream().filter(t -> t.name().endsWith(".attn_k.weight")
                || t.name().endsWith(".attn_v.weight")).mapToLong(t -> t.ne()[1] * 2).sum();
        Map<String, String> cache = Map.of("INFERTOP_CACHE", work.resolve("cache").toString());
        try (InfertopProcess machine = InfertopProcess.start(cache, "machine", "--measure", "--json")) {
            assertEquals(0, machine.waitFor(120), machine.stderrText());
        }
        int port = startServer(tiny, "-np", "4", "-c", "4096");
        JsonNode total;
        List<JsonNode> timings;
        CpuPressure pressure = CpuPressure.start();
        try (InfertopProcess infertop = InfertopProcess.start(cache, "--json", "-d", "1", "--budget", "0", "-p",
                Long.toString(llamaServer.pid()))) {
            infertop.awaitStderr("probes attached", 60);
            Thread.sleep(1500);
            // Lengths that differ: sequences end at different steps, so steps of fewer busy slots come whatever
            // the load (with one length for all, a loaded machine can run every step with all four slots busy).
            timings = completions(port, i -> PREDICT + 8 * i);
            Thread.sleep(2500);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            total = infertop.finalObject();
        }
        assertTheSamplesGiveTheExactShares(total, pressure.share());
        JsonNode roofline = total.path("roofline");
        long serverPositions = 0;
        long decodedTokens = 0;
        for (JsonNode t : timings) {
            long prompt = t.path("prompt_n").asLong();
            long predicted = t.path("predicted_n").asLong();
            for (int j = 0; j < predicted - 1; j++) { // the last sampled token is never decoded
                serverPositions += prompt + 1 + j;
            }
            decodedTokens += predicted - 1;
        }
        StringBuilder table = new StringBuilder();
        JsonNode steps = roofline.path("decode_steps");
        steps.properties().forEach(e -> table.append(String.format(java.util.Locale.ROOT,
                "%n  %s/step: %d steps, weights %d B/step (GGUF %d), %d B/token, KV %d B/step = %.1f positions x %d "
                        + "B (GGUF %d B/position), %.3f FLOP/B, measured %.1f tok/s, bound %.1f tok/s: %s",
                e.getKey(), e.getValue().path("steps").asLong(), e.getValue().path("weight_bytes_per_step").asLong(),
                weights, e.getValue().path("weight_bytes_per_token").asLong(),
                e.getValue().path("kv_bytes_per_step").asLong(),
                e.getValue().path("context_positions_per_step").asDouble(), roofline.path("kv_bytes_per_position")
                        .asLong(), kvBytesPerPosition, e.getValue().path("flop_per_byte").asDouble(),
                e.getValue().path("measured_tokens_per_s").asDouble(), e.getValue().path("bound_tokens_per_s")
                        .asDouble(), e.getValue().path("verdict").asText())));
        System.out.printf("serving: decode steps of the tiny model on 4 slots:%s%n  context positions of decoded "
                        + "generated tokens: infertop %d over %d tokens, server %d over %d; ridge at %s slots, KV "
                        + "passes the weights past %d positions/step%n", table,
                roofline.path("positioned_context_positions").asLong(), roofline.path("positioned_tokens").asLong(),
                serverPositions, decodedTokens, roofline.path("ridge_batch_tokens").asText(),
                roofline.path("kv_overtakes_weights_at_positions").asLong());
        String context = table + "\n" + roofline;

        assertEquals(kvBytesPerPosition, roofline.path("kv_bytes_per_position").asLong(), context);
        assertTrue(steps.size() >= 2, "steps of one size only: " + context);
        assertTrue(steps.properties().stream().anyMatch(e -> Integer.parseInt(e.getKey()) >= 3),
                "no step of 3 or more busy slots: " + context);
        for (Map.Entry<String, JsonNode> e : steps.properties()) {
            JsonNode step = e.getValue();
            int batch = Integer.parseInt(e.getKey());
            long perStep = step.path("weight_bytes_per_step").asLong();
            assertTrue(Math.abs(perStep - weights) <= weights / 100, batch + "/step weights: " + context);
            assertTrue(Math.abs(step.path("weight_bytes_per_token").asLong() - perStep / batch) <= 1,
                    batch + "/step: per token = step / tokens: " + context);
            double expectedKv = step.path("context_positions_per_step").asDouble() * kvBytesPerPosition;
            assertTrue(step.path("context_positions_per_step").asDouble() >= batch, context);
            assertTrue(Math.abs(step.path("kv_bytes_per_step").asLong() - expectedKv) <= 0.05 * expectedKv,
                    batch + "/step KV: " + context);
            assertTrue(step.path("verdict").asText().matches("memory-bound|compute-bound|neither: .*"),
                    batch + "/step verdict: " + context);
            assertTrue(step.path("bound_tokens_per_s").asDouble() > 0 && step.path("measured_tokens_per_s").asDouble() > 0,
                    context);
        }
        assertTrue(Math.abs(roofline.path("positioned_tokens").asLong() - decodedTokens) <= 0.05 * decodedTokens,
                context);
        assertTrue(Math.abs(roofline.path("positioned_context_positions").asLong() - serverPositions)
                <= 0.05 * serverPositions, context);
    }

    private static double lowerMedian(java.util.stream.DoubleStream values) {
        double[] sorted = values.sorted().toArray();
        return sorted[(sorted.length - 1) / 2];
    }

    @Test
    void theLiveViewShowsTheServersDecodeRate() throws Exception {
        int port = startServer();
        pane = TmuxPane.start("serving-" + ProcessHandle.current().pid(), 120, 40, "-p",
                Long.toString(llamaServer.pid()));
        pane.keepSize();
        pane.awaitScreen("the live view", s -> s.contains("llama-server"), 60);
        // Up to three rounds, while the screens below are awaited; once they were seen, the round in progress is
        // the last (on a loaded machine three rounds took over three minutes).
        java.util.concurrent.atomic.AtomicBoolean seen = new java.util.concurrent.atomic.AtomicBoolean();
        CompletableFuture<List<JsonNode>> load = CompletableFuture.supplyAsync(() -> {
            try {
                List<JsonNode> all = new ArrayList<>();
                for (int round = 0; round < 3 && !seen.get(); round++) {
                    all.addAll(completions(port));
                }
                return all;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        String screen = pane.awaitScreen("a decode rate while the server generates", s -> DECODING.matcher(s).find(),
                120);
        // The requests panel: the slots that decode, and calls of 3-4 tokens (one per busy slot) in the histogram.
        pane.keys("r");
        String slots = pane.awaitScreen("the slots generating and 4-token steps", s -> s.contains("PHASE")
                && s.contains("generating") && Pattern.compile("(?m)^ 3-4 +[1-9]").matcher(s).find(), 60);
        assertTrue(Pattern.compile("(?m)^ 0x[0-9a-f]+ +[0-3] generating").matcher(slots).find(), slots);
        pane.keys("Escape");
        // The table's own header: its rows are the operator layer's, which the budget samples in windows (a
        // loaded machine may have traced no graph yet, and then the table says so under the header).
        pane.awaitScreen("Esc: the operator table back in place of the requests panel",
                s -> !s.contains("PHASE") && Pattern.compile("(?m)^OP +CALLS/s").matcher(s).find(), 30);
        seen.set(true);
        load.get(REQUEST_TIMEOUT_S + 60, TimeUnit.SECONDS);
        assertTrue(screen.contains("llama-server"), screen);
        screen = pane.awaitScreen("the requests the server answered", s -> s.contains("answered"), 30);
        assertTrue(Pattern.compile("requests: \\d+ active, [1-9]\\d* answered").matcher(screen).find(), screen);
        pane.keys("q");
        screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
        assertTrue(screen.contains("EXITED-0"), screen);
        assertTrue(llamaServer.isAlive(), "the attached server must survive infertop's exit");
    }

    /**
     * A real client embedding llama.cpp: node-llama-cpp (its prebuilt npm libraries, libllama.v0.5.0.so and a
     * CPU variant it dlopens) chatting through one LlamaChatSession, 3 prompts of at most 24 tokens, each
     * appended to the same sequence. infertop attaches with {@code -p} before the first prompt; the tokens the
     * requests generated must be those the client counted, one request per prompt.
     */
    @Test
    void aNodeLlamaCppChatIsCountedAsTheClientCountsIt() throws Exception {
        Path client = LlamaCppWorkload.cacheDir().resolve("node-client-3.22.1");
        Requirements.require(java.nio.file.Files.exists(client.resolve("client.stamp")),
                "needs node-llama-cpp: run src/scripts/provision-node-client.sh (setup.sh does)");
        Path script = client.resolve("chat.mjs");
        java.nio.file.Files.copy(Path.of("src/scripts/node-client/chat.mjs"), script,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Process node = new ProcessBuilder("node", script.toString(), Models.preset("tiny").toString(), "3", "24")
                .directory(client.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (java.io.BufferedReader out = node.inputReader(java.nio.charset.StandardCharsets.UTF_8);
             java.io.Writer in = node.outputWriter(java.nio.charset.StandardCharsets.UTF_8)) {
            String ready = out.readLine();
            assertTrue(ready != null && ready.startsWith("ready "), "the client did not start: " + ready);
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "-p", Long.toString(node.pid()))) {
                infertop.awaitStderr("probes attached", 60);
                Thread.sleep(1500);
                in.write("go\n");
                in.flush();
                JsonNode counted = JSON.readTree(out.readLine());
                Thread.sleep(2500); // two intervals: every record drained
                LlamaBenchIT.signal(infertop.process.pid(), "TERM");
                assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
                JsonNode total = infertop.finalObject();
                JsonNode requests = total.path("requests");
                String context = "infertop: " + total + "\nclient: " + counted;
                System.out.printf("serving: node-llama-cpp client generated %d tokens in %d prompts; infertop: "
                        + "%d generated, %d requests, %d decoded, %d prompt tokens%n",
                        counted.path("generated").asLong(), counted.path("prompts").asLong(),
                        requests.path("generated_tokens").asLong(), requests.path("count").asLong(),
                        total.path("tokens_decode").asLong(), total.path("tokens_prefill").asLong());
                assertEquals(counted.path("generated").asLong(), requests.path("generated_tokens").asLong(), context);
                assertEquals(counted.path("prompts").asLong(), requests.path("count").asLong(), context);
                assertEquals(counted.path("generated").asLong() - counted.path("prompts").asLong(),
                        total.path("tokens_decode").asLong(), "the last token of each answer is never decoded: " + context);
                assertEquals(0, requests.path("batches_unread").asLong(), context);
                assertTrue(total.path("layers").path("token").path("probes").toString().contains("libllama.v0.5.0.so"),
                        "probes on node-llama-cpp's own libllama: " + total.path("layers").path("token"));
            }
            in.write("exit\n");
            in.flush();
            assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the client did not exit");
        } finally {
            node.destroyForcibly();
        }
    }

    /**
     * Speculative decoding in a real llama-server ({@code -md}, draft-simple, drafts of up to 4 tokens, one slot),
     * greedy sampling: with the target as its own draft every draft is kept (a designed truth), with a different,
     * smaller draft model few are. infertop must count the target's tokens only (prompt tokens, llama_decode calls
     * and generated tokens as the server counts them) and the drafts and kept drafts as the server's spec_decode
     * counters do.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "target {0}, draft {1}")
    @org.junit.jupiter.params.provider.CsvSource({"tiny, tiny", "deep, tiny"})
    void speculativeDecodingCountsTheTargetsTokensAndTheDraftsKept(String target, String draft) throws Exception {
        int port = startServer(Models.preset(target), "-md", Models.preset(draft).toString(), "--spec-type",
                "draft-simple", "--spec-draft-n-max", "4", "-np", "1", "-c", "2048");
        // The token layer only: what is counted here comes from it, and the operator layer's node events (two
        // models' graphs) can overrun the ring on a loaded machine, which would lose llama_decode records too.
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "--layers", "token", "-p",
                Long.toString(llamaServer.pid()))) {
            infertop.awaitStderr("probes attached", 60);
            Thread.sleep(1500);
            int requests = 3;
            greedyCompletions(port, requests);
            Map<String, Double> metrics = metrics(port);
            Thread.sleep(2500);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertTrue(!infertop.stderrText().contains("llama.h's layout"),
                    "llama_batch's layout calibrated from the server's own libllama: " + infertop.stderrText());
            assertSpeculativeAsTheServerCounts("serving", total, metrics, target, draft, requests, "");
        }
    }

    /**
     * Speculative decoding's figures in infertop's final object against the server's counters: drafts and kept
     * drafts, the target's prompt tokens, calls and generated tokens, one TTFT per request; every draft kept when
     * the target drafts for itself, fewer with another draft model. {@code note} ends the messages.
     */
    static void assertSpeculativeAsTheServerCounts(String label, JsonNode total, Map<String, Double> metrics,
                                                   String target, String draft, int requests, String note) {
        JsonNode spec = total.path("speculative");
        String context = "infertop: " + total + "\nserver: " + metrics + note;
        long drafted = metrics.get("llamacpp:spec_decode_num_draft_tokens_total").longValue();
        long kept = metrics.get("llamacpp:spec_decode_num_accepted_tokens_total").longValue();
        System.out.printf("%s: speculative (target %s, draft %s): drafts %d / server %d, kept %d / server %d, "
                + "verifications %d, draft calls %d; prompt %d / server %d, calls %d / server %d%n", label, target, draft,
                spec.path("draft_tokens").asLong(), drafted, spec.path("accepted_tokens").asLong(), kept,
                spec.path("verify_steps").asLong(), spec.path("draft_calls").asLong(),
                total.path("tokens_prefill").asLong(), metrics.get("llamacpp:prompt_tokens_total").longValue(),
                total.path("decode_calls").asLong(), metrics.get("llamacpp:n_decode_total").longValue());
        assertEquals(0, total.path("lost_events").asLong(), "records lost: the counts cannot agree: " + context);
        assertTrue(drafted > 0, "the server drafted nothing: " + context);
        assertEquals(drafted, spec.path("draft_tokens").asLong(), "drafted tokens: " + context);
        assertEquals(kept, spec.path("accepted_tokens").asLong(), "kept drafts: " + context);
        assertEquals(0, spec.path("unresolved_steps").asLong(), context);
        assertTrue(spec.path("draft_calls").asLong() > 0, "the draft context's calls: " + context);
        if (target.equals(draft)) {
            assertEquals(drafted, kept, "a model drafting for itself, greedy: every draft kept: " + context);
        } else {
            assertTrue(kept < drafted, "another model's drafts: " + context);
        }
        assertEquals(metrics.get("llamacpp:prompt_tokens_total").longValue(), total.path("tokens_prefill").asLong(),
                "the target's prompt tokens only: " + context);
        assertEquals(metrics.get("llamacpp:n_decode_total").longValue(), total.path("decode_calls").asLong(),
                "the target's calls only: " + context);
        assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue(),
                total.path("requests").path("generated_tokens").asLong(), "generated tokens: " + context);
        assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue() - requests,
                total.path("tokens_decode").asLong(), "kept tokens decoded (the last sampled is not): " + context);
        assertEquals(requests, total.path("requests").path("count").asLong(), context);
        assertEquals(requests, total.path("requests").path("ttft_ms").path("count").asLong(),
                "one TTFT per request, none from the draft context: " + context);
    }

    /** Starts llama-server (4 slots, metrics on) on a free loopback port; returns the port once it is ready. */
    private int startServer() throws Exception {
        return startServer(model, "-np", "4", "-c", "4096");
    }

    /** Starts llama-server on {@code serverModel} with {@code options}, metrics on, on a free loopback port. */
    private int startServer(Path serverModel, String... options) throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(server.toString(), "-m", serverModel.toString()));
        command.addAll(List.of(options));
        command.addAll(List.of("--metrics", "--host", "127.0.0.1", "--port", Integer.toString(port), "-t", "2"));
        llamaServer = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (HttpReady.await("http://127.0.0.1:" + port + "/health", llamaServer, 120, () -> "llama-server")) {
            return port;
        }
        throw new AssertionError("llama-server not ready within 120 s");
    }

    /** {@link #REQUESTS} concurrent completions of different prompt lengths; each response's timings. */
    static List<JsonNode> completions(int port) throws Exception {
        return completions(port, i -> PREDICT);
    }

    /** As {@link #completions(int)}, request {@code i} asking for {@code predict.applyAsInt(i)} tokens. */
    static List<JsonNode> completions(int port, java.util.function.IntUnaryOperator predict) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        List<Integer> asked = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            String prompt = "Once upon a time ".repeat(1 + i); // a byte-level vocabulary: a token per byte
            asked.add(predict.applyAsInt(i));
            String body = JSON.writeValueAsString(Map.of("prompt", prompt, "n_predict", asked.get(i),
                    "cache_prompt", false, "ignore_eos", true));
            pending.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/completion"))
                    .timeout(Duration.ofSeconds(REQUEST_TIMEOUT_S)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        List<JsonNode> timings = new ArrayList<>();
        for (int i = 0; i < pending.size(); i++) {
            HttpResponse<String> done = pending.get(i).get(REQUEST_TIMEOUT_S + 30, TimeUnit.SECONDS);
            assertEquals(200, done.statusCode(), done.body());
            JsonNode answer = JSON.readTree(done.body());
            assertEquals(asked.get(i), answer.path("timings").path("predicted_n").asInt(), done.body());
            timings.add(answer.path("timings"));
        }
        return timings;
    }

    /** {@code requests} greedy completions one after another, prompts of growing length, 24 tokens each. */
    static void greedyCompletions(int port, int requests) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int i = 0; i < requests; i++) {
            String body = JSON.writeValueAsString(Map.of("prompt", "Once upon a time ".repeat(1 + i),
                    "n_predict", 24, "cache_prompt", false, "ignore_eos", true, "temperature", 0));
            HttpResponse<String> done = client.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/completion")).timeout(Duration.ofSeconds(120))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, done.statusCode(), done.body());
        }
    }

    /** The server's own counters (llamacpp:NAME value lines of /metrics). */
    static Map<String, Double> metrics(int port) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        Map<String, Double> values = new HashMap<>();
        for (String line : response.body().split("\n")) {
            if (line.startsWith("llamacpp:")) {
                String[] parts = line.split(" ");
                values.put(parts[0], Double.parseDouble(parts[1]));
            }
        }
        return values;
    }
}
