package dev.infertop.it;

import dev.infertop.bpf.InfertopProbes;
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

    /** Both sources counted: the API's figures as llama-bench's arithmetic, and the graphs' equal to them. */
    private static void assertGraphsAgreeWithTheApi(JsonNode total, LlamaBenchRun run, String build) {
        run.assertTokenCounts(total);
        assertGraphsAgreeWithTheApi(total, build);
    }

    /** The graphs' figures equal the API's, graph for call, whatever the run held. */
    private static void assertGraphsAgreeWithTheApi(JsonNode total, String build) {
        JsonNode graphs = total.get("graph_tokens");
        System.out.printf("graph tokens, %s: api %d + %d in %d calls, graphs %d + %d in %d graphs (%d with positions)%n",
                build, total.get("tokens_prefill").asLong(), total.get("tokens_decode").asLong(),
                total.get("decode_calls").asLong(), graphs.get("prompt_tokens").asLong(),
                graphs.get("generated_tokens").asLong(), graphs.get("graphs").asLong(),
                graphs.get("positions_read").asLong());
        assertEquals("api", total.get("token_source").asText(), total.toString());
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
        String build = "Debian sid (" + Containers.debianVersions() + ")";
        if (total.get("decode_calls").asLong() == BENCH.calls()) {
            assertGraphsAgreeWithTheApi(total, BENCH, build);
        } else {
            // Stopped after its first calls each time (a loaded machine): the agreement still holds per run.
            System.out.println("graph tokens, Debian sid: attached late in every attempt; agreement checked only");
            assertGraphsAgreeWithTheApi(total, build);
        }
        assertTrue(total.get("layers").get("token").get("probes").toString().contains("llama_process"),
                total.get("layers").get("token").toString());
    }

    /**
     * An engine shaped like Ollama's (src/test/native/sched-engine.c): no llama.cpp, its own LLM-shaped graphs run
     * by ggml's scheduler, built against Debian sid's libggml-dev and run in sid's root on its libggml0. It feeds 2
     * sequences of a 16-token prompt and 8 single-token steps, and waits for SIGUSR1 before its first graph: the
     * tokens from its graphs are what it fed, and the source says graphs.
     */
    @Test
    void anEngineDrivingGgmlsSchedulerItselfIsCountedFromItsGraphs() throws Exception {
        Path root = Containers.debianRoot();
        Path ggmlDev = root.resolveSibling("ggml-dev");
        Requirements.require(java.nio.file.Files.exists(root.resolveSibling("ggml-dev.stamp")),
                "needs Debian sid's libggml-dev headers in " + ggmlDev + ": run src/scripts/provision-distro-llama.sh");
        String cpuVariant = Containers.cpuVariant(root, tinyModel.getParent());
        Path dir = java.nio.file.Files.createTempDirectory("infertop-sched-engine");
        try {
            String libDir = "/usr/lib/" + (InfertopProbes.architecture().equals("x86_64")
                    ? "x86_64-linux-gnu" : "aarch64-linux-gnu");
            // Built by the host's gcc, linked against the root's own libggml (its glibc is newer than the host's:
            // its symbols are resolved in the container, where the engine runs).
            Gcc.compile(dir, java.nio.file.Files.readString(Path.of("src/test/native/sched-engine.c")), "sched-engine",
                    "-I", ggmlDev.resolve("usr/include").toString(),
                    Containers.hostFile(root, libDir + "/libggml.so.0").toString(),
                    Containers.hostFile(root, libDir + "/libggml-base.so.0").toString(), "-Wl,--allow-shlib-undefined");
            dir.toFile().setReadable(true, false);
            dir.toFile().setExecutable(true, false);
            Process container = Containers.start(root, dir, List.of(), "/models/sched-engine", "2", "16", "8");
            containers.add(container);
            long pid = Containers.awaitTool(container, "sched-engine", 60, "/libggml-base.so", "/" + cpuVariant);
            JsonNode total;
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-p", Long.toString(pid))) {
                infertop.awaitStderr("probes attached", 120);
                Containers.signal(pid, 10); // SIGUSR1: the engine starts computing
                assertTrue(container.waitFor(120, TimeUnit.SECONDS), "the engine finished in its container");
                assertEquals(0, container.exitValue(), "the engine's exit status");
                assertEquals(0, infertop.waitFor(60), infertop.stderrText());
                total = infertop.finalObject();
            }
            System.out.println("graph tokens, sched-engine: " + total.get("tokens_prefill") + " + "
                    + total.get("tokens_decode") + ", " + total.get("graph_tokens") + ", " + total.get("token_state"));
            assertEquals("graphs", total.get("token_source").asText(), total.toString());
            assertEquals("llama_decode is not called: inlined or not used; tokens from the graphs",
                    total.get("token_state").asText());
            assertEquals(2 * 16, total.get("tokens_prefill").asLong(), total.toString());
            assertEquals(2 * 8, total.get("tokens_decode").asLong());
            JsonNode graphs = total.get("graph_tokens");
            assertEquals(2 * 9, graphs.get("graphs").asLong(), graphs.toString());
            assertEquals(2 * 9, graphs.get("positions_read").asLong(), graphs.toString());
            assertEquals(2, total.get("ttft_ms").get("count").asLong(), "a prompt graph a sequence");
            assertEquals(2 * 8, total.get("tpot_ms").get("count").asLong(), "a step graph a token");
            assertTrue(total.get("layers").get("graph").get("probes").toString()
                    .contains("ggml_backend_sched_graph_compute_async"), total.get("layers").toString());
            assertEquals(0, total.get("lost_events").asLong());
        } finally {
            try (var files = java.nio.file.Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
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
        assertEquals(BENCH.calls(), total.get("decode_calls").asLong(), "a graph source's calls are its graphs");
        assertEquals(BENCH.calls(), total.get("graph_tokens").get("graphs").asLong());
        assertEquals(BENCH.promptTokensCounted(), total.get("tokens_prefill").asLong(), total.toString());
        assertEquals(BENCH.generatedTokensCounted(), total.get("tokens_decode").asLong());
        assertEquals(BENCH.generatedTokensCounted(), total.get("tpot_ms").get("count").asLong());
        assertEquals(BENCH.prefillCalls() + BENCH.generationRuns(), total.get("ttft_ms").get("count").asLong());
        assertTrue(total.get("decode_tokens_per_s").asDouble() > 0, total.toString());
    }
}
