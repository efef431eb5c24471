package dev.infertop.it;

import dev.infertop.export.DotFile;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * --dag on a real llama.cpp running the dense "tiny" synthetic model (2 layers): the DOT written at exit
 * holds, per layer, the op chain a llama block implies, wired by the source addresses the probes read:
 * RMS_NORM → MUL (attn_norm) → MUL_MAT Q/K/V → ROPE Q/K → attention → MUL_MAT attn_out → ADD (ffn_inp) →
 * RMS_NORM → MUL (ffn_norm) → MUL_MAT gate/up → GLU → MUL_MAT ffn_out → ADD (l_out) → the next layer's norm.
 * "A feeds B" means B reads A directly or through nodes that compute nothing (RESHAPE, VIEW, PERMUTE).
 */
class OperatorDagIT {
    private static final int LAYERS = 2; // SyntheticModel preset "tiny"
    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    @TempDir
    Path dir;

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        tinyModel = Models.preset("tiny");
    }

    @Test
    void dagOfTheLastDecodeGraphHasEveryLayersChain() throws Exception {
        Path file = dir.resolve("decode.dot");
        Path bench = workload.sourceBuildTool("llama-bench");
        // At most 60 intervals (30 s): on a quiet machine the bench ends first, after a few seconds, long enough for
        // weights to be named from the live target even when the collector lags. Where a busy loop per core holds
        // the cores, ggml's two threads rarely run at once and 200 repetitions took minutes: the run ends at the
        // bound instead, and the DAG is of the last decode graph traced by then. --budget 0: every graph traced,
        // where the default budget's windows on a loaded machine could trace no decode step whole in 30 s.
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-n", "60", "--budget", "0", "--dag",
                file.toString(), "--", bench.toString(), "-m", tinyModel.toString(), "-p", "16", "-n", "64", "-r",
                "200", "-t", "2")) {
            assertEquals(0, infertop.waitFor(180), "stderr:\n" + infertop.stderrText());
            assertTrue(infertop.stderrText().contains("DAG written to " + file), infertop.stderrText());
        } finally {
            LeakCheck.assertNothingLeft();
        }
        DotFile dot = DotFile.parse(Files.readString(file));
        String embd = node(dot, "embd", "GET_ROWS");
        String layerInput = embd;
        for (int l = 0; l < LAYERS; l++) {
            String norm = node(dot, "attn_norm-" + l, "MUL");
            assertFeeds(dot, layerInput, sourceWithOp(dot, norm, "RMS_NORM"));
            String q = node(dot, "Qcur-" + l, "MUL_MAT");
            String k = node(dot, "Kcur-" + l, "MUL_MAT");
            String v = node(dot, "Vcur-" + l, "MUL_MAT");
            for (String projection : List.of(q, k, v)) {
                assertFeeds(dot, norm, projection);
            }
            // Leaves are named from the target's memory: the weights each matmul reads.
            assertTrue(leafNames(dot, q).contains("blk." + l + ".attn_q.weight"), leafNames(dot, q).toString());
            assertTrue(leafNames(dot, v).contains("blk." + l + ".attn_v.weight"), leafNames(dot, v).toString());
            String ropeQ = node(dot, "Qcur-" + l, "ROPE");
            String ropeK = node(dot, "Kcur-" + l, "ROPE");
            assertFeeds(dot, q, ropeQ);
            assertFeeds(dot, k, ropeK);
            String attnOut = node(dot, "attn_out-" + l, "MUL_MAT");
            // Flash attention (one FLASH_ATTN_EXT) or the unfused KQ → SOFT_MAX → KQV: either way Q reaches attn_out.
            assertTrue(reaches(dot, ropeQ, attnOut), "ROPE Q-" + l + " reaches attn_out-" + l);
            String ffnInp = node(dot, "ffn_inp-" + l, "ADD");
            if (l < LAYERS - 1) {
                assertFeeds(dot, attnOut, ffnInp);
                assertFeeds(dot, layerInput, ffnInp);
            } else {
                // The last layer keeps only the rows of tokens whose logits are wanted (inp_out_ids):
                // attn_out and the residual each pass a GET_ROWS before the ADD.
                assertFeeds(dot, attnOut, sourceWithOp(dot, ffnInp, "GET_ROWS", attnOut));
                assertFeeds(dot, layerInput, sourceWithOp(dot, ffnInp, "GET_ROWS", layerInput));
            }
            String ffnNorm = node(dot, "ffn_norm-" + l, "MUL");
            assertFeeds(dot, ffnInp, sourceWithOp(dot, ffnNorm, "RMS_NORM"));
            String gate = node(dot, "ffn_gate-" + l, "MUL_MAT");
            String up = node(dot, "ffn_up-" + l, "MUL_MAT");
            assertTrue(leafNames(dot, up).contains("blk." + l + ".ffn_up.weight"), leafNames(dot, up).toString());
            assertFeeds(dot, ffnNorm, gate);
            assertFeeds(dot, ffnNorm, up);
            String down = node(dot, "ffn_out-" + l, "MUL_MAT");
            assertTrue(reaches(dot, gate, down) && reaches(dot, up, down), "gate and up reach ffn_out-" + l);
            String out = node(dot, "l_out-" + l, "ADD");
            assertFeeds(dot, down, out);
            assertFeeds(dot, ffnInp, out);
            layerInput = out;
        }
        String output = node(dot, "result_output", "MUL_MAT");
        assertTrue(reaches(dot, layerInput, output), "the last layer reaches result_output");

        // Measured times and the critical path: from the embedding to the output, through every layer's l_out.
        long criticalNs = Long.parseLong(dot.graph.get("critical_path_ns"));
        long totalNs = Long.parseLong(dot.graph.get("total_ns"));
        assertTrue(criticalNs > 0 && criticalNs <= totalNs, criticalNs + " of " + totalNs);
        // The critical path is the longest measured path, recomputed here from the file's own times and edges.
        Map<String, Long> longest = new HashMap<>();
        long longestNs = dot.nodes.keySet().stream().filter(id -> id.startsWith("n"))
                .mapToLong(id -> longestPathNs(dot, id, longest)).max().orElse(0);
        assertEquals(longestNs, criticalNs, "critical_path_ns is the longest path");
        assertEquals("true", dot.nodes.get(embd).get("critical"));
        if ("true".equals(dot.nodes.get(output).get("critical"))) {
            for (int l = 0; l < LAYERS; l++) {
                assertEquals("true", dot.nodes.get(node(dot, "l_out-" + l, "ADD")).get("critical"), "l_out-" + l);
            }
        } else {
            // A side branch (a KV cache write) measured longer than the path to the output: on a loaded 2-core
            // machine a node of the tiny model (microseconds) preempted for milliseconds does that. Then it must be
            // strictly longer, by the file's own times.
            long toOutputNs = longestPathNs(dot, output, longest);
            System.out.println("critical path ends off the output: " + criticalNs + " ns vs " + toOutputNs
                    + " ns to result_output");
            assertTrue(toOutputNs < criticalNs, toOutputNs + " vs " + criticalNs);
        }
        assertTrue(Long.parseLong(dot.nodes.get(node(dot, "ffn_up-0", "MUL_MAT")).get("time_ns")) > 0);
        assertEquals("0", dot.nodes.get(node(dot, "Qcur-0", "RESHAPE")).get("time_ns"));
    }

    /** Node time plus the longest path to any node source (as OperatorDag computes it), memoised. */
    private static long longestPathNs(DotFile dot, String id, Map<String, Long> memo) {
        Long known = memo.get(id);
        if (known != null) {
            return known;
        }
        long best = 0;
        for (String source : dot.sourcesOf(id)) {
            if (source.startsWith("n")) {
                best = Math.max(best, longestPathNs(dot, source, memo));
            }
        }
        long ns = best + Math.max(0, Long.parseLong(dot.nodes.get(id).getOrDefault("time_ns", "0")));
        memo.put(id, ns);
        return ns;
    }

    @Test
    void aDagFileThatCannotBeWrittenIsRefusedBeforeTracing() throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start("--json", "--dag", dir.resolve("x.png").toString(),
                "--", "true")) {
            assertEquals(2, infertop.waitFor(30));
            String stderr = infertop.stderrText().strip();
            assertTrue(stderr.contains("--dag") && stderr.contains("name a .dot (Graphviz DOT) or .svg file"), stderr);
            assertEquals(1, stderr.lines().count(), stderr);
        }
    }

    /** tensor_name of the leaves {@code id} reads directly. */
    private static List<String> leafNames(DotFile dot, String id) {
        return dot.sourcesOf(id).stream().filter(source -> source.startsWith("l"))
                .map(source -> dot.nodes.get(source).get("tensor_name")).toList();
    }

    /** The node named {@code name} with op {@code op}. */
    private static String node(DotFile dot, String name, String op) {
        for (Map.Entry<String, Map<String, String>> node : dot.nodes.entrySet()) {
            if (name.equals(node.getValue().get("tensor_name")) && op.equals(node.getValue().get("op"))) {
                return node.getKey();
            }
        }
        throw new AssertionError("no " + op + " node named " + name);
    }

    /** The direct source of {@code id} (through views) whose op is {@code op} and that reads {@code from}. */
    private static String sourceWithOp(DotFile dot, String id, String op, String from) {
        for (String source : viewSources(dot, id)) {
            if (op.equals(dot.nodes.get(source).get("op")) && viewSources(dot, source).contains(from)) {
                return source;
            }
        }
        throw new AssertionError(id + " (" + dot.nodes.get(id).get("tensor_name") + ") reads no " + op + " of " + from);
    }

    /** The direct source of {@code id} (through views) whose op is {@code op}. */
    private static String sourceWithOp(DotFile dot, String id, String op) {
        for (String source : viewSources(dot, id)) {
            if (op.equals(dot.nodes.get(source).get("op"))) {
                return source;
            }
        }
        throw new AssertionError(id + " (" + dot.nodes.get(id).get("tensor_name") + ") reads no " + op);
    }

    /** Sources of {@code id}, looking through nodes that compute nothing. */
    private static List<String> viewSources(DotFile dot, String id) {
        List<String> result = new ArrayList<>();
        Deque<String> todo = new ArrayDeque<>(dot.sourcesOf(id));
        Set<String> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            String source = todo.pop();
            if (!seen.add(source) || source.startsWith("l")) {
                continue;
            }
            if ("false".equals(dot.nodes.get(source).get("executed"))) {
                todo.addAll(dot.sourcesOf(source));
            } else {
                result.add(source);
            }
        }
        return result;
    }

    private static void assertFeeds(DotFile dot, String from, String to) {
        assertNotNull(from);
        assertTrue(viewSources(dot, to).contains(from), dot.nodes.get(from).get("tensor_name") + " "
                + dot.nodes.get(from).get("op") + " should feed " + dot.nodes.get(to).get("tensor_name") + " "
                + dot.nodes.get(to).get("op") + "; it reads " + viewSources(dot, to));
    }

    /** Whether a path of edges leads from {@code from} to {@code to}. */
    private static boolean reaches(DotFile dot, String from, String to) {
        Deque<String> todo = new ArrayDeque<>(List.of(from));
        Set<String> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            String at = todo.pop();
            if (at.equals(to)) {
                return true;
            }
            if (seen.add(at)) {
                todo.addAll(dot.consumersOf(at));
            }
        }
        return false;
    }
}
