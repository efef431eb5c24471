package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.ElfFile;
import dev.infertop.process.ElfSymbol;
import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.SyntheticModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator layer's numbers against oracles that owe nothing to infertop.
 *
 * <ul>
 * <li>Per op type: every worker thread calls the op's kernel ({@code ggml_compute_forward_<op>}) once for each
 * node it runs, so a tracefs uprobe on the kernel's entry must hit {@code nodes × threads} times (a fused
 * group such as RMS_NORM+MUL is one call of {@code ggml_compute_forward_rms_norm_mul_fused} per thread, so
 * {@code groups × threads}). Done on the source build and on the prebuilt npm libraries. The libraries are
 * copied first and the copies are run and probed: a uprobe belongs to a file, and nobody else runs the copies,
 * so other llama.cpp processes on the machine cannot add hits.
 * <li>Per graph, from the model's shape: a dense llama layer has 7 matrix products (q, k, v, attention output,
 * gate, up, down), plus the output head; a MoE layer has 4 attention products, its router (ffn_gate_inp) and
 * 3 expert products (MUL_MAT_ID: gate, up, down experts). llama.cpp keeps the graph's topology constant
 * ({@code build_inp_out_ids} always adds the last layer's GET_ROWS on the output rows, even when every token is
 * an output), so prefill and decode graphs have the same node counts.
 * <li>Time: a thread's work plus barrier wait fits in the CPU graph wall time, and so does the sum of the ops'
 * wall times.
 * <li>Stripped libraries: the token and graph layers still count exactly; the operator layer, whose thread
 * function is local, is unavailable and says the library is stripped.
 * </ul>
 *
 * <p>{@code llama-bench -p 16 -n 8 -r 1}: pp16 = warm-up + 1 rep = 2 llama_decode calls; tg8 = 1 warm-up call
 * + 8 = 9; 11 in all, one CPU graph each. {@code -p 0 -n 8 -r 1}: 9 one-token calls.
 */
class OperatorFidelityIT {
    private static final int THREADS = 2;
    private static final long MIXED_CALLS = 2 + 9;
    private static final long DECODE_ONLY_CALLS = 9;
    private static final double TIME_TOLERANCE = 1.02;
    private static final String GROUP = "infertop_fidelity";

    /** infertop's op name → the kernel every thread calls once per node (per group, for a fused name). */
    private static final Map<String, String> KERNELS = new LinkedHashMap<>();
    /**
     * The AMX extra buffer type's matmul (C++, exported): on a CPU with AMX (Sapphire Rapids and later), a build
     * with AMX code routes weight matmuls (F16, Q4_0, ...) to it instead of ggml_compute_forward_mul_mat, once
     * per node per thread like any kernel. A MUL_MAT node's calls are the two kernels' together.
     */
    static final String AMX_MUL_MAT = "_Z24ggml_backend_amx_mul_matPK19ggml_compute_paramsP11ggml_tensor";

    static {
        KERNELS.put("MUL_MAT", "ggml_compute_forward_mul_mat");
        KERNELS.put("MUL_MAT ", AMX_MUL_MAT); // the same op, its other kernel (key padded: one map entry each)
        KERNELS.put("RMS_NORM+MUL", "ggml_compute_forward_rms_norm_mul_fused");
        KERNELS.put("RMS_NORM", "ggml_compute_forward_rms_norm");
        KERNELS.put("MUL", "ggml_compute_forward_mul");
        KERNELS.put("ADD", "ggml_compute_forward_add");
        KERNELS.put("GET_ROWS", "ggml_compute_forward_get_rows");
        KERNELS.put("SET_ROWS", "ggml_compute_forward_set_rows");
        KERNELS.put("ROPE", "ggml_compute_forward_rope");
        KERNELS.put("FLASH_ATTN_EXT", "ggml_compute_forward_flash_attn_ext");
        KERNELS.put("GLU", "ggml_compute_forward_glu");
        KERNELS.put("SOFT_MAX", "ggml_compute_forward_soft_max");
    }

    /** The ops the dense tiny model runs: their kernels must have been hit, or the oracle proves nothing. */
    private static final List<String> DENSE_MODEL_OPS = List.of("MUL_MAT", "RMS_NORM+MUL", "ADD", "GET_ROWS",
            "SET_ROWS", "ROPE", "FLASH_ATTN_EXT", "GLU");

    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() throws Exception {
        workload = Requirements.canTraceLlamaCpp();
        tinyModel = Models.preset("tiny");
        Tracefs.require();
    }

    @AfterEach
    void nothingLeft() throws Exception {
        LeakCheck.assertNothingLeft();
    }

    // ---------------------------------------------------------------- per-op kernel calls (tracefs oracle)

    @Test
    void sourceBuildOpNodesEqualKernelCallsPerThread() throws Exception {
        Path copy = copyDirectory(workload.sourceBuildTool("llama-bench").getParent(), "src-");
        try {
            opNodesEqualKernelCalls("source", copy);
        } finally {
            deleteRecursively(copy);
        }
    }

    @Test
    void prebuiltNpmOpNodesEqualKernelCallsPerThread() throws Exception {
        Path copy = copyDirectory(workload.prebuiltDir(), "npm-");
        try {
            opNodesEqualKernelCalls("prebuilt", copy);
        } finally {
            deleteRecursively(copy);
        }
    }

    /** One probed kernel in one CPU library. */
    private record KernelProbe(String op, String event, Path library) {}

    private static void opNodesEqualKernelCalls(String build, Path dir) throws Exception {
        Path llama = definingFile(dir, "libllama", "llama_decode");
        List<Path> cpuLibraries = definingFiles(dir, "libggml-cpu", "ggml_graph_compute");
        assertFalse(cpuLibraries.isEmpty(), "no CPU backend library in " + dir);

        List<KernelProbe> probes = new ArrayList<>();
        JsonNode total;
        Map<String, Long> hits;
        try (Tracefs tracefs = Tracefs.group(GROUP)) {
            tracefs.addProbe("decode", llama, entryOffset(llama, "llama_decode").orElseThrow());
            for (Path library : cpuLibraries) {
                String variant = variant(library);
                for (Map.Entry<String, String> kernel : KERNELS.entrySet()) {
                    String op = kernel.getKey().strip();
                    Optional<Long> offset = entryOffset(library, kernel.getValue());
                    if (offset.isEmpty()) {
                        assertFalse(DENSE_MODEL_OPS.contains(op) && !kernel.getValue().equals(AMX_MUL_MAT),
                                kernel.getValue() + " is not a symbol of " + library);
                        continue;
                    }
                    String event = (kernel.getValue().equals(AMX_MUL_MAT) ? "amx_mul_mat"
                            : kernel.getValue().substring("ggml_compute_forward_".length())) + "_" + variant;
                    tracefs.addProbe(event, library, offset.get());
                    probes.add(new KernelProbe(op, event, library));
                }
            }
            tracefs.enable();
            total = trace(Map.of("LD_LIBRARY_PATH", dir.toString()), dir.resolve("llama-bench"), tinyModel,
                    "-p", "16", "-n", "8");
            tracefs.disable();
            hits = tracefs.hits();
        }

        // Exactly one CPU library ran the graphs (the npm build dlopens one of its variants).
        Map<Path, Long> hitsByLibrary = new TreeMap<>();
        for (KernelProbe probe : probes) {
            hitsByLibrary.merge(probe.library(), Tracefs.hitsOf(hits, probe.event()), Long::sum);
        }
        List<Path> ran = hitsByLibrary.entrySet().stream().filter(e -> e.getValue() > 0).map(Map.Entry::getKey).toList();
        assertEquals(1, ran.size(), "CPU libraries whose kernels ran: " + hitsByLibrary);
        Path loaded = ran.getFirst();
        String operatorProbes = total.get("layers").get("operator").get("probes").toString();
        assertTrue(operatorProbes.contains(loaded.getFileName().toString()),
                "infertop probes the CPU library that ran (" + loaded.getFileName() + "): " + operatorProbes);
        if (probes.stream().anyMatch(p -> p.library().equals(loaded) && p.op().contains("+"))) {
            // A release with a fused op: its calls are not probed, its groups come from the graph (checked below
            // against the fused kernel's own calls).
            assertTrue(operatorProbes.contains("not probed: fused node groups are worked out from the graph"),
                    operatorProbes);
            assertFalse(operatorProbes.contains("_fused call in"), "no uprobe on a fused call: " + operatorProbes);
        }

        long decodeCalls = Tracefs.hitsOf(hits, "decode");
        assertEquals(MIXED_CALLS, decodeCalls, "llama_decode calls seen by tracefs");
        assertEquals(decodeCalls, total.get("decode_calls").asLong(), "decode_calls");
        assertEquals(decodeCalls, total.get("op_graphs").asLong(), "op_graphs: one CPU graph per llama_decode");
        assertEquals(0, total.get("op_graphs_unattributed").asLong(), "op_graphs_unattributed");
        assertEquals(0, total.get("lost_events").asLong(), "lost_events");
        assertEquals("on", total.get("layers").get("operator").get("state").asText());
        JsonNode ops = total.get("ops");
        // llama-bench makes a thread pool per test, so the worker of pp16 and that of tg8 may be two threads:
        // count thread reports, not threads.
        long groupReports = 0;
        for (JsonNode thread : total.get("threads")) {
            groupReports += thread.get("groups").asLong();
        }
        long groups = 0;
        for (JsonNode op : ops) {
            groups += op.get("groups").asLong();
        }
        assertEquals(THREADS * groups, groupReports, "each of the " + THREADS + " threads of a graph reports every"
                + " group: " + total.get("threads"));
        Map<String, String> report = new LinkedHashMap<>();
        List<String> mismatches = new ArrayList<>();
        Map<String, Long> callsByOp = new LinkedHashMap<>();
        Map<String, String> eventsByOp = new LinkedHashMap<>();
        for (KernelProbe probe : probes) {
            if (probe.library().equals(loaded)) {
                callsByOp.merge(probe.op(), Tracefs.hitsOf(hits, probe.event()), Long::sum);
                eventsByOp.merge(probe.op(), probe.event(), (a, b) -> a + "+" + b);
            }
        }
        for (Map.Entry<String, Long> opCalls : callsByOp.entrySet()) {
            KernelProbe probe = new KernelProbe(opCalls.getKey(), eventsByOp.get(opCalls.getKey()), loaded);
            long calls = opCalls.getValue();
            long counted = executions(ops, probe.op());
            report.put(probe.op(), "kernel " + calls + " / " + THREADS + " threads = " + (double) calls / THREADS
                    + " vs infertop " + counted + (probe.op().contains("+") ? " groups" : " nodes"));
            if (calls != counted * THREADS) {
                mismatches.add(probe.op());
            }
            if (DENSE_MODEL_OPS.contains(probe.op())) {
                assertTrue(calls > 0, probe.event() + " never ran: the oracle would prove nothing");
            }
        }
        System.out.println(build + " (" + loaded.getFileName() + "), " + decodeCalls + " graphs: " + report);
        assertEquals(List.of(), mismatches, "kernel calls != infertop's count × " + THREADS + ": " + report);
        for (Iterator<String> names = ops.fieldNames(); names.hasNext(); ) {
            String op = names.next();
            assertTrue(KERNELS.containsKey(op), "infertop reports " + op + ", which no kernel probe checks: " + report);
        }

        // Model structure, on the same run (prefill and decode graphs alike).
        int layers = SyntheticModel.preset("tiny").layerCount();
        assertEquals((7L * layers + 1) * decodeCalls, ops.get("MUL_MAT").get("nodes").asLong(),
                "MUL_MAT nodes: (7 per layer + output) per graph");
        System.out.println(build + " time: " + assertTimeInvariants(total));
    }

    /** Node executions for a plain op, group executions for a fused one (one kernel call per thread each). */
    private static long executions(JsonNode ops, String op) {
        JsonNode entry = ops.get(op);
        if (entry == null) {
            return 0;
        }
        return entry.get(op.contains("+") ? "groups" : "nodes").asLong();
    }

    // ---------------------------------------------------------------- structure (model-implied oracle)

    @Test
    void denseDecodeGraphHasSevenMatMulsPerLayerPlusOutput() throws Exception {
        JsonNode total = trace(Map.of(), workload.sourceBuildTool("llama-bench"), tinyModel, "-p", "0", "-n", "8");
        long graphs = total.get("op_graphs").asLong();
        assertEquals(DECODE_ONLY_CALLS, total.get("decode_calls").asLong());
        assertEquals(DECODE_ONLY_CALLS, graphs, "op_graphs");
        assertEquals(0, total.get("op_graphs_unattributed").asLong());
        assertEquals(0, total.get("lost_events").asLong());
        int layers = SyntheticModel.preset("tiny").layerCount();
        JsonNode ops = total.get("ops");
        System.out.println("dense decode per graph: MUL_MAT " + perGraph(ops, "MUL_MAT", graphs) + " (layers " + layers
                + "), time: " + assertTimeInvariants(total));
        assertEquals((7L * layers + 1) * graphs, ops.get("MUL_MAT").get("nodes").asLong(),
                "MUL_MAT nodes: q, k, v, attn output, gate, up, down per layer + the output head, per graph");
        assertEquals(null, ops.get("MUL_MAT_ID"), "a dense model has no MUL_MAT_ID");
    }

    @Test
    void moeDecodeGraphHasThreeExpertMatMulsAndARouterPerLayer() throws Exception {
        SyntheticModel moe = SyntheticModel.preset("tiny-moe");
        JsonNode total = trace(Map.of(), workload.sourceBuildTool("llama-bench"), Models.preset("tiny-moe"),
                "-p", "0", "-n", "8");
        long graphs = total.get("op_graphs").asLong();
        assertEquals(DECODE_ONLY_CALLS, total.get("decode_calls").asLong());
        assertEquals(DECODE_ONLY_CALLS, graphs, "op_graphs");
        assertEquals(0, total.get("op_graphs_unattributed").asLong());
        assertEquals(0, total.get("lost_events").asLong());
        int layers = moe.layerCount();
        JsonNode ops = total.get("ops");
        System.out.println("moe decode per graph: MUL_MAT " + perGraph(ops, "MUL_MAT", graphs) + ", MUL_MAT_ID "
                + perGraph(ops, "MUL_MAT_ID", graphs) + " (layers " + layers + "), time: "
                + assertTimeInvariants(total));
        assertEquals(3L * layers * graphs, ops.get("MUL_MAT_ID").get("nodes").asLong(),
                "MUL_MAT_ID nodes: gate, up, down experts per layer, per graph");
        assertEquals((4L * layers + layers + 1) * graphs, ops.get("MUL_MAT").get("nodes").asLong(),
                "MUL_MAT nodes: q, k, v, attn output + the ffn_gate_inp router per layer + the output head, per graph");
    }

    private static String perGraph(JsonNode ops, String op, long graphs) {
        JsonNode entry = ops.get(op);
        return entry == null ? "none" : String.format(Locale.ROOT, "%.2f", entry.get("nodes").asDouble() / graphs);
    }

    // ---------------------------------------------------------------- time invariants

    /** Checks the time invariants of a final object; returns the numbers, for the log. */
    private static String assertTimeInvariants(JsonNode total) {
        double busy = total.get("cpu_graph_busy_ms").asDouble();
        assertTrue(busy > 0, "cpu_graph_busy_ms " + busy);
        double limit = busy * TIME_TOLERANCE;
        StringBuilder numbers = new StringBuilder(String.format(Locale.ROOT, "cpu_graph_busy_ms %.1f", busy));
        double work = 0;
        double wait = 0;
        for (Iterator<Map.Entry<String, JsonNode>> threads = total.get("threads").fields(); threads.hasNext(); ) {
            Map.Entry<String, JsonNode> thread = threads.next();
            double threadWork = thread.getValue().get("work_ms").asDouble();
            double threadWait = thread.getValue().get("barrier_wait_ms").asDouble();
            numbers.append(String.format(Locale.ROOT, "; thread %s work %.1f + wait %.1f = %.1f", thread.getKey(),
                    threadWork, threadWait, threadWork + threadWait));
            assertTrue(threadWork + threadWait <= limit, "thread " + thread.getKey() + ": work " + threadWork
                    + " + barrier wait " + threadWait + " > CPU graph wall time " + busy + " × " + TIME_TOLERANCE);
            work += threadWork;
            wait += threadWait;
        }
        double opsWall = 0;
        for (Iterator<JsonNode> ops = total.get("ops").elements(); ops.hasNext(); ) {
            opsWall += ops.next().get("wall_ms").asDouble();
        }
        numbers.append(String.format(Locale.ROOT, "; sum of ops wall_ms %.1f (%.1f %%)", opsWall, 100 * opsWall / busy));
        assertTrue(opsWall <= limit, "sum of ops' wall_ms " + opsWall + " > CPU graph wall time " + busy + " × "
                + TIME_TOLERANCE);
        assertTrue(work > 0, "work reported: " + numbers);
        assertTrue(wait > 0, "barrier wait reported apart from work: " + numbers);
        return numbers.toString();
    }

    // ---------------------------------------------------------------- stripped libraries

    @Test
    void strippedLibrariesKeepEveryLayerWithTheNodeLoopFoundFromTheCode() throws Exception {
        // The executable is copied too: ggml looks for backends beside it, and so does infertop.
        Path copy = copyDirectory(workload.sourceBuildTool("llama-bench").getParent(), "stripped-");
        try {
            List<Path> stripped = new ArrayList<>();
            try (Stream<Path> files = Files.list(copy)) {
                for (Path file : files.sorted().toList()) {
                    String name = file.getFileName().toString();
                    if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                            && (name.startsWith("libggml-cpu") || name.startsWith("libllama")) && name.contains(".so")) {
                        run("strip", "--strip-all", file.toString());
                        stripped.add(file);
                    }
                }
            }
            for (Path file : stripped) {
                try (ElfFile elf = ElfFile.open(file)) {
                    assertTrue(elf.isStripped(), file + " has no .symtab after strip");
                }
            }
            Map<String, String> environment = Map.of("LD_LIBRARY_PATH", copy.toString());
            Map<String, Path> loads = ldd(copy.resolve("llama-bench"), environment);
            for (String soname : List.of("libllama.so.0", "libggml-cpu.so.0")) {
                Path loaded = loads.get(soname);
                assertTrue(loaded != null && loaded.startsWith(copy) && stripped.contains(loaded.toRealPath()),
                        soname + " loads from the stripped copy, not " + loaded + ": " + loads);
            }

            JsonNode total = trace(environment, copy.resolve("llama-bench"), tinyModel, "-p", "16", "-n", "8");
            new LlamaBenchRun(16, 8, 1).assertTokenCounts(total);
            assertEquals(MIXED_CALLS, total.get("cpu_graph_computes").asLong());
            assertEquals(MIXED_CALLS, total.get("graph_computes").get("CPU").asLong());
            assertEquals(0, total.get("lost_events").asLong());
            JsonNode layers = total.get("layers");
            assertEquals("on", layers.get("token").get("state").asText(), layers.toString());
            assertEquals("on", layers.get("graph").get("state").asText(), layers.toString());
            // The node loop, a local function gone with .symtab, is found from the code and the unwind tables.
            JsonNode operator = layers.get("operator");
            System.out.println("stripped: operator layer " + operator);
            assertEquals("on", operator.get("state").asText(), layers.toString());
            String probes = operator.path("probes").toString();
            assertTrue(probes.contains("ggml_graph_compute_thread @ libggml-cpu")
                    && probes.contains("stripped library: ggml_graph_compute_thread is the function at"), probes);
            assertTrue(probes.contains("ggml_barrier call in ggml_graph_compute_thread"), probes);
            assertTrue(total.path("op_graphs").asLong() > 0, "graphs read by the operator layer: " + total);
            assertEquals(0, total.path("op_graphs_unattributed").asLong(), "every graph followed: " + total);
        } finally {
            deleteRecursively(copy);
        }
    }

    /** ldd's view: soname → the file it resolves to, in the given environment. */
    private static Map<String, Path> ldd(Path executable, Map<String, String> environment) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("ldd", executable.toString()).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process ldd = builder.start();
        String output = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, ldd.waitFor(), output);
        Map<String, Path> loads = new TreeMap<>();
        for (String line : output.lines().toList()) {
            String[] parts = line.strip().split("\\s+=>\\s+");
            if (parts.length == 2 && parts[1].startsWith("/")) {
                loads.put(parts[0], Path.of(parts[1].replaceAll("\\s+\\(0x[0-9a-f]+\\)$", "")));
            }
        }
        return loads;
    }

    // ---------------------------------------------------------------- helpers

    /** {@code infertop --json -- BENCH -m MODEL ARGS -r 1 -t 2}, its final object; prints the run's time. */
    private static JsonNode trace(Map<String, String> environment, Path bench, Path model, String... benchArgs)
            throws Exception {
        // Every graph traced: the counts compared are exact only then (with the default budget a run that a loaded
        // machine stretches past the first window is sampled).
        List<String> args = new ArrayList<>(List.of("--json", "--budget", "0"));
        args.addAll(InfertopProcess.env(environment));
        args.addAll(List.of("--", bench.toString(), "-m", model.toString()));
        args.addAll(List.of(benchArgs));
        args.addAll(List.of("-r", "1", "-t", Integer.toString(THREADS)));
        long start = System.nanoTime();
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), "infertop exit status; stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            System.out.printf(Locale.ROOT, "%s %s: %.1f s%n", bench, String.join(" ", benchArgs),
                    (System.nanoTime() - start) / 1e9);
            return total;
        }
    }

    /** The regular files of {@code dir} named {@code prefix}… that define {@code function}. */
    private static List<Path> definingFiles(Path dir, String prefix, String function) throws Exception {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                if (name.startsWith(prefix) && name.contains(".so") && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                        && entryOffset(file, function).isPresent()) {
                    found.add(file);
                }
            }
        }
        return found;
    }

    private static Path definingFile(Path dir, String prefix, String function) throws Exception {
        List<Path> found = definingFiles(dir, prefix, function);
        assertEquals(1, found.size(), function + " defined by " + found);
        return found.getFirst();
    }

    /** The file offset of {@code function}'s first instruction, if the library defines it. */
    private static Optional<Long> entryOffset(Path library, String function) throws Exception {
        try (ElfFile elf = ElfFile.open(library)) {
            Optional<ElfSymbol> symbol = elf.function(function).filter(s -> s.sizeBytes() > 0);
            if (symbol.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(elf.fileOffsetOf(symbol.get().vaddr()));
        }
    }

    /** "haswell" for libggml-cpu-haswell.so, "cpu" for libggml-cpu.so.0.25.1. */
    private static String variant(Path library) {
        String name = library.getFileName().toString();
        return name.startsWith("libggml-cpu-") ? name.substring("libggml-cpu-".length(), name.indexOf(".so")) : "cpu";
    }

    /** Copies the files of {@code source} (symbolic links as links) into a new temporary directory. */
    private static Path copyDirectory(Path source, String prefix) throws IOException {
        Path target = Files.createTempDirectory("infertop-fidelity-" + prefix).toRealPath();
        Predicate<Path> wanted = p -> !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        try (Stream<Path> files = Files.list(source)) {
            for (Path file : files.filter(wanted).toList()) {
                Files.copy(file, target.resolve(file.getFileName()), LinkOption.NOFOLLOW_LINKS,
                        StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        return target;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    private static void run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), String.join(" ", command) + ": " + output);
    }
}
