package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * infertop end to end on OLDER llama.cpp releases: llama-bench of llama.cpp b4234 (node-llama-cpp 3.3.0), with
 * libllama, libggml-base, libggml-cpu and libggml as separate shared libraries, and of b3995 (node-llama-cpp
 * 3.2.0), from before ggml's backend split (libllama and one libggml), each built from that release's own
 * source by {@code src/scripts/provision-old-llama.sh --build llama-bench VERSION}. Nothing in infertop is told
 * which release this is: struct layouts are calibrated against its ggml, probe sites found by symbol.
 *
 * <p>What differs from the current release and is exercised here: struct ggml_tensor has other offsets and no
 * GGML_TENSOR_FLAG_COMPUTE; the CPU node loop (ggml_graph_compute_thread) computes every node, empty ones
 * (VIEW, RESHAPE, PERMUTE, TRANSPOSE, NONE) included, and calls ggml_barrier after each, with no barrier after
 * the loop and no fused ops: one {@code call ggml_barrier} in ggml_graph_compute_thread.isra.0, the only site
 * infertop's "first two call sites" rule then finds. The source builds use OpenMP (GGML_OPENMP's default).
 *
 * <p>b4234's and b3995's llama-bench ({@code examples/llama-bench/llama-bench.cpp}) run, per test, one warm-up
 * and then {@code -r} repetitions: pp16 = 1 warm-up + 1 llama_decode of 16 tokens; tg8 = 1 warm-up call of 1 token +
 * 8 calls of 1 token. Each call fits one ubatch (n_batch 2048, n_ubatch 512) and computes one CPU graph.
 *
 * <p>The tiny model (2 dense layers) without flash attention (llama-bench's default fa 0 there) has, per
 * layer, 9 MUL_MATs: Q, K, V, KQ, KQV, the attention output, FFN gate, up and down; and one for the output
 * head: 19 per graph (seen in the traced graphs: 70 nodes each, 19 of them MUL_MAT).
 */
class OlderReleaseIT {
    static final String NODE_LLAMA_CPP_VERSION = "3.3.0"; // llama.cpp b4234
    static final String PRE_SPLIT_NODE_LLAMA_CPP_VERSION = "3.2.0"; // llama.cpp b3995
    private static final LlamaBenchRun BENCH = new LlamaBenchRun(16, 8, 1);
    private static final int TINY_LAYERS = 2;
    private static final long MUL_MATS_PER_GRAPH = 9L * TINY_LAYERS + 1;

    private static Path tinyModel;

    @BeforeAll
    static void requirements() {
        Requirements.canTrace();
        tinyModel = Models.preset("tiny");
    }

    /** llama-bench built from an older release's bundled source, or the test is skipped (workstation) / failed (CI). */
    static Path oldLlamaBench(String nodeLlamaCppVersion) {
        Path bench = LlamaCppWorkload.cacheDir()
                .resolve("llama.cpp-node-" + nodeLlamaCppVersion + "-prebuilt/build/bin/llama-bench");
        Requirements.require(Files.isExecutable(bench), "needs " + bench + ": run src/scripts/provision-old-llama.sh "
                + "--build llama-bench " + nodeLlamaCppVersion);
        return bench;
    }

    static JsonNode trace(Path bench) throws Exception {
        // --budget 0: every graph traced, so every one is attributed (with the default budget a run that a loaded
        // machine stretches past the first window is sampled).
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--budget", "0", "--", bench.toString(),
                "-m", tinyModel.toString(), "-p", Integer.toString(BENCH.promptTokens()), "-n",
                Integer.toString(BENCH.generatedTokens()), "-r", Integer.toString(BENCH.repetitions()), "-t", "2"));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            int status = infertop.waitFor(240);
            assertEquals(0, status, "infertop exit status (llama-bench's own); stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            System.out.println("older release " + bench + ": " + total);
            return total;
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    @Test
    void b4234LlamaBenchCountsAndOperatorLayer() throws Exception {
        assertCountsAndOperatorLayer(trace(oldLlamaBench(NODE_LLAMA_CPP_VERSION)), "libggml-cpu.so",
                "ggml_barrier");
    }

    /**
     * b3995 (node-llama-cpp 3.2.0), before ggml's backend split: ggml's core, the CPU backend and its node loop
     * are all in libggml.so, which infertop then calibrates (there is no libggml-base). ggml_barrier is a static
     * function there, inlined into the node loop by this (OpenMP) build: the loop's barrier is its own
     * {@code call GOMP_barrier@plt}. Same llama-bench warm-up, same graphs.
     */
    @Test
    void b3995PreSplitLlamaBenchCountsAndOperatorLayer() throws Exception {
        assertCountsAndOperatorLayer(trace(oldLlamaBench(PRE_SPLIT_NODE_LLAMA_CPP_VERSION)), "libggml.so",
                "GOMP_barrier");
    }

    private static void assertCountsAndOperatorLayer(JsonNode total, String nodeLoopLibrary, String barrier) {
        BENCH.assertTokenCounts(total);
        assertEquals(BENCH.calls(), total.get("graph_computes").get("CPU").asLong(), "one CPU graph per call");
        assertEquals(BENCH.calls(), total.get("cpu_graph_computes").asLong());
        assertEquals(0, total.get("lost_events").asLong());
        JsonNode layers = total.get("layers");
        assertEquals("on", layers.get("token").get("state").asText());
        assertEquals("on", layers.get("graph").get("state").asText());

        JsonNode operator = layers.get("operator");
        assertEquals("on", operator.get("state").asText(), operator.toString());
        String probes = operator.get("probes").toString();
        assertTrue(probes.contains(barrier + " call in ggml_graph_compute_thread")
                && probes.contains("@ " + nodeLoopLibrary + "+"), "the node loop's barrier is probed in "
                + nodeLoopLibrary + ": " + probes);
        assertEquals(BENCH.calls(), total.get("op_graphs").asLong(), "every graph attributed: " + total);
        assertEquals(0, total.get("op_graphs_unattributed").asLong());
        JsonNode mulMat = total.get("ops").get("MUL_MAT");
        assertEquals(BENCH.calls() * MUL_MATS_PER_GRAPH, mulMat.get("nodes").asLong(), mulMat.toString());
        assertEquals(BENCH.calls() * MUL_MATS_PER_GRAPH, mulMat.get("groups").asLong(), "no fusion here");
        // The loop computes every node, so each of a graph's nodes is a group: the groups add up to its nodes.
        long groups = 0;
        for (JsonNode op : total.get("ops")) {
            groups += op.get("groups").asLong();
        }
        assertEquals(total.get("cpu_graph_nodes").asLong(), groups, "one group per node: " + total.get("ops"));
    }
}
