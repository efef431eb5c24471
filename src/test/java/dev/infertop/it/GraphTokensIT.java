package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The token layer's graph source against its API source: on every llama.cpp build where both exist, the tokens the
 * graphs' token embedding and positions give equal, per run, exactly, those llama_decode's (or llama_process's)
 * calls give; and where the API is not probed the figures are the graphs', said so.
 * {@code llama-bench -p 64 -n 32 -r 3}: 4 × 64 + 4 prompt tokens, 3 × 31 generated ones (LlamaBenchRun), one graph
 * a call.
 */
class GraphTokensIT {
    private static final LlamaBenchRun BENCH = new LlamaBenchRun(64, 32, 3);
    private static final LlamaBenchRun OLD_BENCH = new LlamaBenchRun(16, 8, 1);

    private static Path tinyModel;
    private final List<Process> containers = new ArrayList<>();

    @BeforeAll
    static void requirements() {
        Requirements.canTrace();
        tinyModel = Models.preset("tiny");
    }

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            Containers.stop(container);
        }
        LeakCheck.assertNothingLeft();
    }

    private static List<String> bench(Path tool, Path model, LlamaBenchRun run) {
        return List.of(tool.toString(), "-m", model.toString(), "-p", Integer.toString(run.promptTokens()), "-n",
                Integer.toString(run.generatedTokens()), "-r", Integer.toString(run.repetitions()), "-t", "2");
    }

    private static JsonNode traceLaunched(Map<String, String> environment, List<String> infertopOptions,
                                          List<String> command) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(infertopOptions);
        args.addAll(InfertopProcess.env(environment));
        args.add("--");
        args.addAll(command);
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), "infertop exit status; stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            return total;
        }
    }

    /** Both sources counted: the API's figures, and the graphs' equal to them, graph for call. */
    private static void assertGraphsAgreeWithTheApi(JsonNode total, LlamaBenchRun run, String build) {
        JsonNode graphs = total.get("graph_tokens");
        System.out.printf("graph tokens, %s: api %d + %d in %d calls, graphs %d + %d in %d graphs (%d with positions)%n",
                build, total.get("tokens_prefill").asLong(), total.get("tokens_decode").asLong(),
                total.get("decode_calls").asLong(), graphs.get("prompt_tokens").asLong(),
                graphs.get("generated_tokens").asLong(), graphs.get("graphs").asLong(),
                graphs.get("positions_read").asLong());
        assertEquals("api", total.get("token_source").asText(), total.toString());
        run.assertTokenCounts(total);
        assertEquals(total.get("tokens_prefill").asLong(), graphs.get("prompt_tokens").asLong(), build + ": " + total);
        assertEquals(total.get("tokens_decode").asLong(), graphs.get("generated_tokens").asLong(), build + ": " + total);
        assertEquals(total.get("decode_calls").asLong(), graphs.get("graphs").asLong(), "a graph a call: " + graphs);
        assertEquals(graphs.get("graphs").asLong(), graphs.get("positions_read").asLong(),
                "the CPU backend's positions are host memory: " + graphs);
        assertEquals(0, graphs.get("encoder_passes").asLong());
        assertEquals(0, total.get("lost_events").asLong());
    }

    @Test
    void sourceBuildGraphsAgreeWithLlamaDecode() throws Exception {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        JsonNode total = traceLaunched(Map.of(), List.of(),
                bench(workload.sourceBuildTool("llama-bench"), tinyModel, BENCH));
        assertGraphsAgreeWithTheApi(total, BENCH, "source build");
    }

    @Test
    void npmPrebuiltLibrariesGraphsAgreeWithLlamaDecode() throws Exception {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        JsonNode total = traceLaunched(workload.prebuiltEnvironment(), List.of(),
                bench(workload.prebuiltDir().resolve("llama-bench"), tinyModel, BENCH));
        assertGraphsAgreeWithTheApi(total, BENCH, "npm prebuilt");
    }

    @Test
    void olderReleasesGraphsAgreeWithLlamaDecode() throws Exception {
        for (String version : List.of(OlderReleaseIT.NODE_LLAMA_CPP_VERSION,
                OlderReleaseIT.PRE_SPLIT_NODE_LLAMA_CPP_VERSION)) {
            JsonNode total = traceLaunched(Map.of(), List.of(),
                    bench(OlderReleaseIT.oldLlamaBench(version), tinyModel, OLD_BENCH));
            assertGraphsAgreeWithTheApi(total, OLD_BENCH, "node-llama-cpp " + version);
        }
    }

    /**
     * Debian sid's llama.cpp calls llama_process with batches built token by token (each token's position read from
     * the batch): its graphs must say the same, in the container its tools run in.
     */
    @Test
    void debianSidGraphsAgreeWithLlamaProcess() throws Exception {
        Path root = Containers.debianRoot();
        Path models = tinyModel.getParent();
        String cpuVariant = Containers.cpuVariant(root, models);
        List<String> command = bench(Path.of("/usr/bin/llama-bench"), Path.of("/models").resolve(tinyModel.getFileName()),
                BENCH);
        JsonNode total = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            Process container = Containers.start(root, models, List.of(), command.toArray(String[]::new));
            containers.add(container);
            long pid = Containers.awaitTool(container, "llama-bench", 60, List.of("/libllama.so", "/" + cpuVariant),
                    List.of(tinyModel.getFileName().toString()));
            Containers.signal(pid, Containers.SIGSTOP);
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-p", Long.toString(pid))) {
                infertop.awaitStderr("probes attached", 120);
                Containers.signal(pid, Containers.SIGCONT);
                assertTrue(container.waitFor(240, TimeUnit.SECONDS), "llama-bench finished in its container");
                assertEquals(0, infertop.waitFor(60), infertop.stderrText());
                total = infertop.finalObject();
            }
            if (total.get("decode_calls").asLong() == BENCH.calls()) {
                break; // else it ran a call before it was stopped (a loaded machine): again
            }
            System.out.println("graph tokens, Debian sid: llama-bench ran before it was stopped (attempt " + attempt
                    + "): again");
        }
        assertGraphsAgreeWithTheApi(total, BENCH, "Debian sid (" + Containers.debianVersions() + ")");
        assertTrue(total.get("layers").get("token").get("probes").toString().contains("llama_process"),
                total.get("layers").get("token").toString());
    }

    /**
     * Without the API's probes (the token layer off: as where llama_decode is inlined into its callers and the
     * exported copy is never called), the token figures are the graphs', and every output says so: never a
     * silent 0 tok/s.
     */
    @Test
    void withoutTheApiTheTokensAreTheGraphs() throws Exception {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        JsonNode total = traceLaunched(Map.of(), List.of("--layers", "graph"),
                bench(workload.sourceBuildTool("llama-bench"), tinyModel, BENCH));
        assertEquals("graphs", total.get("token_source").asText(), total.toString());
        assertEquals("llama_decode is not called: inlined or not used; tokens from the graphs",
                total.get("token_state").asText());
        assertEquals(0, total.get("decode_calls").asLong());
        assertEquals(BENCH.promptTokensCounted(), total.get("tokens_prefill").asLong(), total.toString());
        assertEquals(BENCH.generatedTokensCounted(), total.get("tokens_decode").asLong());
        assertEquals(BENCH.generatedTokensCounted(), total.get("tpot_ms").get("count").asLong());
        assertEquals(BENCH.prefillCalls() + BENCH.generationRuns(), total.get("ttft_ms").get("count").asLong());
        assertTrue(total.get("decode_tokens_per_s").asDouble() > 0, total.toString());
    }
}
