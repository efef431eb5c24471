package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A llama.cpp built with the BLAS backend (OpenBLAS; provision-llama.sh --blas): ggml's scheduler sends
 * matmuls with a batch of 32 or more to BLAS, so a 64-token prefill splits each layer between CPU and BLAS
 * while the 1-token decode steps stay on the CPU. The JSON must show both backends, BLAS running MUL_MAT
 * (timed: its graphs hold nothing else that computes) and the CPU the rest; the live view's backends
 * panel (key b) shows the same split, and key d writes the DAG.
 */
class BackendsIT {
    private static final int PROMPT_TOKENS = 64;
    private static final int LAYERS = 2; // preset "tiny"
    private static Path blasBench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        blasBench = workload.root().resolve("build-blas/bin/llama-bench");
        Requirements.require(Files.isExecutable(blasBench),
                "needs the BLAS build of llama-bench: run src/scripts/provision-llama.sh --blas");
        tinyModel = Models.preset("tiny");
    }

    @Test
    void prefillMatmulsRunOnBlasAndTheRestOnTheCpu() throws Exception {
        JsonNode total;
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--budget", "0", "--", blasBench.toString(),
                "-m", tinyModel.toString(), "-p", Integer.toString(PROMPT_TOKENS), "-n", "4", "-r", "1", "-t", "2")) {
            assertEquals(0, infertop.waitFor(180), "stderr:\n" + infertop.stderrText());
            total = infertop.finalObject();
        } finally {
            LeakCheck.assertNothingLeft();
        }
        assertEquals(0, total.get("lost_events").asLong());
        JsonNode blas = total.get("backends").get("BLAS");
        JsonNode cpu = total.get("backends").get("CPU");
        assertTrue(blas != null && cpu != null, total.get("backends").toString());

        // Graph layer: BLAS computed graphs, as many as the backends line says.
        assertEquals(total.get("graph_computes").get("BLAS").asLong(), blas.get("graphs").asLong());
        assertTrue(blas.get("graphs").asLong() > 0);
        assertTrue(blas.get("busy_ms").asDouble() > 0);

        // BLAS: the prefill's 64-row matmuls, in 2 prefill calls (warm-up and the run): Q, K, V, attn_out,
        // gate, up, down in every layer but the last, where only the rows of the wanted logits go on after
        // attn_out (inp_out_ids), so its FFN (and result_output) run on one row, on the CPU: Q, K, V, attn_out.
        // Besides them only nodes that compute nothing.
        JsonNode blasOps = blas.get("ops");
        long matmuls = blasOps.get("MUL_MAT").get("nodes").asLong();
        assertEquals(2L * ((LAYERS - 1) * 7 + 4), matmuls, "BLAS MUL_MAT nodes: " + blasOps);
        assertEquals(blas.get("busy_ms").asDouble(), blasOps.get("MUL_MAT").get("ms").asDouble(), 0.002,
                "BLAS graphs hold only matmuls, so all their time is MUL_MAT's");
        Set<String> viewOps = Set.of("NONE", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE");
        for (Iterator<String> ops = blasOps.fieldNames(); ops.hasNext(); ) {
            String op = ops.next();
            assertTrue(op.equals("MUL_MAT") || viewOps.contains(op), "BLAS ran " + op + ": " + blasOps);
        }

        // CPU: everything else (norms, rope, attention, adds), timed by the operator layer, and the decode
        // steps' matmuls (a batch of 1 stays on the CPU).
        Set<String> cpuOps = new HashSet<>();
        cpu.get("ops").fieldNames().forEachRemaining(cpuOps::add);
        assertTrue(cpuOps.stream().anyMatch(op -> op.contains("RMS_NORM")), cpuOps.toString());
        assertTrue(cpuOps.contains("ROPE") && cpuOps.contains("ADD") && cpuOps.contains("MUL_MAT"), cpuOps.toString());
        assertTrue(cpu.get("ops").get("ROPE").get("ms").asDouble() > 0);
    }

    @Test
    void liveBackendsPanelShowsTheSplitAndDWritesTheDag(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        TmuxPane.require();
        try (TmuxPane pane = TmuxPane.start("infertop-backends-it-" + ProcessHandle.current().pid(), 100, 30, dir,
                "--", blasBench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0",
                "-pg", PROMPT_TOKENS + ",4", "-r", "100000", "-t", "2")) {
            pane.awaitScreen("decode tokens/s", s -> s.matches("(?s).*decode +[1-9][0-9.]* tok/s.*"), 120);
            pane.keys("b");
            String screen = pane.awaitScreen("the backends panel with a BLAS row and its MUL_MAT",
                    s -> s.contains("BACKEND / OP") && blasMatmulRow(s) != null, 30);
            List<String> lines = screen.lines().toList();
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(" CPU ")), screen);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("   ROPE")), "CPU ops under the CPU row:\n" + screen);

            pane.keys("d");
            screen = pane.awaitScreen("the DAG written", s -> s.contains("DAG written to infertop-dag-"), 30);
            try (var files = Files.list(dir)) {
                Path dag = files.filter(f -> f.getFileName().toString().startsWith("infertop-dag-")).findFirst()
                        .orElseThrow(() -> new AssertionError("no DAG file in " + dir));
                assertTrue(Files.readString(dag).contains("op=\"MUL_MAT\""), dag.toString());
            }
            pane.keys("q");
            pane.awaitScreen("infertop's exit", s -> s.contains("EXITED-0"), 30);
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /** The op row under the BLAS row that shows MUL_MAT with a time, or null. */
    private static String blasMatmulRow(String screen) {
        List<String> lines = screen.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(" BLAS ")) {
                for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("   "); j++) {
                    if (lines.get(j).matches("\\s+MUL_MAT\\s+[0-9.]+\\s+[0-9.]+%\\s+[1-9][0-9]*\\s*")) {
                        return lines.get(j);
                    }
                }
            }
        }
        return null;
    }
}
