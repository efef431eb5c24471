package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A llama.cpp with the BLAS backend nobody here compiled: Debian sid's libggml0-backend-blas (stripped,
 * dlopen'ed from the backends directory) with OpenBLAS, in a root of its own (provision-distro-llama.sh's BLAS
 * root) started as a container. ggml's scheduler sends matmuls with a batch of 32 or more to BLAS, so a
 * 64-token prefill splits each layer between CPU and BLAS while the 1-token decode steps stay on the CPU. The
 * JSON must show both backends, BLAS running MUL_MAT (timed: its graphs hold nothing else that computes) and
 * the CPU the rest; the live view's backends panel (key b) shows the same split, and key d writes the DAG.
 */
class BackendsIT {
    /** The backend as its mapping reads, on either architecture. */
    private static final String BACKEND = "/ggml/backends0/libggml-blas.so";
    private static final int PROMPT_TOKENS = 64;
    private static final int LAYERS = 2; // preset "tiny"
    private static Path root;
    private static Path tinyModel;
    private final List<Process> containers = new ArrayList<>();

    @BeforeAll
    static void requirements() {
        Requirements.canTrace();
        Path dir = Containers.debianRoot().getParent();
        Requirements.require(Files.exists(dir.resolve("blas-root.stamp")),
                "needs Debian sid's BLAS backend and OpenBLAS in a root of their own: run "
                        + "src/scripts/provision-distro-llama.sh (setup.sh does)");
        root = dir.resolve("blas-root");
        tinyModel = Models.preset("tiny");
    }

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            Containers.stop(container);
        }
        LeakCheck.assertNothingLeft();
    }

    /**
     * sid's llama-bench with {@code benchArgs}, its pid once the BLAS backend and the model are mapped. Without
     * repacking: on a CPU with an extra buffer type (AMX, or ggml's repacked layouts) the weights go there, where
     * BLAS cannot read them, and every matmul stays on the CPU.
     */
    private long startBench(String... benchArgs) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/llama-bench", "-m", "/models/" + tinyModel.getFileName(),
                "--repack", "0"));
        command.addAll(List.of(benchArgs));
        Process container = Containers.start(root, tinyModel.getParent(), List.of(), command.toArray(String[]::new));
        containers.add(container);
        return Containers.awaitTool(container, "llama-bench", 120, List.of("/libllama.so", BACKEND),
                List.of(tinyModel.getFileName().toString()));
    }

    @Test
    void prefillMatmulsRunOnBlasAndTheRestOnTheCpu() throws Exception {
        JsonNode total;
        long pid = startBench("-p", Integer.toString(PROMPT_TOKENS), "-n", "4", "-r", "1", "-t", "2");
        // Stopped before its first graph while infertop attaches, so the warm-up's prefill is traced too.
        Containers.signal(pid, Containers.SIGSTOP);
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--budget", "0", "-p",
                Long.toString(pid))) {
            infertop.awaitStderr("probes attached", 180);
            Containers.signal(pid, Containers.SIGCONT);
            Process container = containers.getLast();
            assertTrue(container.waitFor(300, TimeUnit.SECONDS), "llama-bench finished in its container");
            assertEquals(0, container.exitValue(), "llama-bench's exit status");
            assertEquals(0, infertop.waitFor(60), "stderr:\n" + infertop.stderrText());
            total = infertop.finalObject();
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
    void liveBackendsPanelShowsTheSplitAndDWritesTheDag(@TempDir Path dir) throws Exception {
        TmuxPane.require();
        long pid = startBench("-p", "0", "-n", "0", "-pg", PROMPT_TOKENS + ",4", "-r", "100000", "-t", "2");
        try (TmuxPane pane = TmuxPane.start("infertop-backends-it-" + ProcessHandle.current().pid(), 100, 30, dir,
                "-p", Long.toString(pid))) {
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
