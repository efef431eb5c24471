package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.process.ElfFile;
import dev.infertop.process.ElfSymbol;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application nobody here wrote that links llama.cpp statically: @fugood/llama.node 1.7.15, whose llama.cpp
 * lives in a stripped, LTO-built {@code index.node} (no libllama or libggml file anywhere). infertop attaches with
 * {@code -p PID} and no {@code --lib}: it must find the addon by what it defines, calibrate ggml's layouts against
 * the addon itself, and count the CPU graphs a tracefs uprobe on the addon's {@code ggml_graph_compute} counts.
 * One run (8 completions of 32 tokens, 2 threads) serves every test; each checks one thing of it.
 */
class LinkedInAppIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String GROUP = "infertop_linked";
    private static final String ADDON = "node_modules/@fugood/node-llama-linux-x64/index.node";
    private static final int COMPLETIONS = 8;
    /** The prompt tokens of the model load's warm-up graph. */
    private static final int WARM_UP_TOKENS = 2;

    private static Path app;
    private static JsonNode total;
    private static JsonNode counted;
    private static long tracefsGraphs;
    private static long tracefsMulMats;
    private static String stderr;

    @BeforeAll
    static void runTheAppUnderInfertop() throws Exception {
        Requirements.requireRoot();
        Requirements.require(System.getProperty("os.arch").equals("amd64"),
                "@fugood/node-llama-linux-x64 is an x86_64 addon; this machine is " + System.getProperty("os.arch"));
        Path provisioned = LlamaCppWorkload.cacheDir().resolve("llama-node-1.7.15");
        Requirements.require(Files.exists(provisioned.resolve("app.stamp")),
                "needs @fugood/llama.node: run src/scripts/provision-llama-node.sh (setup.sh does)");
        Tracefs.require();
        // A copy of its own: a tracefs uprobe counts every process running the file's code.
        app = copyTree(provisioned.resolve("node_modules"), Files.createTempDirectory("infertop-linked-")
                .toRealPath().resolve("node_modules")).getParent();
        Files.copy(Path.of("src/scripts/llama-node/completions.js"), app.resolve("completions.js"),
                StandardCopyOption.REPLACE_EXISTING);
        Path addon = app.resolve(ADDON);
        Process node = new ProcessBuilder("node", app.resolve("completions.js").toString(),
                Models.preset("tiny").toString(), Integer.toString(COMPLETIONS), "32", "2")
                .directory(app.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        BlockingQueue<String> lines = readLines(node.inputReader(StandardCharsets.UTF_8)); // llama.node logs there too
        try (Writer in = node.outputWriter(StandardCharsets.UTF_8); Tracefs tracefs = Tracefs.group(GROUP)) {
            await(lines, "ready ", 180);
            // Enabled while the app waits: every graph it runs from here on is one of the completions.
            tracefs.addProbe("graph", addon, entryOffset(addon, "ggml_graph_compute"));
            tracefs.addProbe("mul_mat", addon, entryOffset(addon, "ggml_compute_forward_mul_mat"));
            tracefs.enable();
            long startNs = System.nanoTime();
            try (InfertopProcess infertop = InfertopProcess.start(Map.of("INFERTOP_DEBUG", "1"), "--json", "-d", "1",
                    "--budget", "0", "-p", Long.toString(node.pid()))) {
                infertop.awaitStderr("infertop: tracing pid", 120);
                System.out.printf("linked-in app: infertop attached to node (index.node, no --lib) in %d ms; %s%n",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), infertop.stderrText().lines()
                                .filter(l -> l.contains("start: ")).map(String::strip).toList());
                in.write("go\n");
                in.flush();
                counted = JSON.readTree(await(lines, "{\"completions\"", 600));
                Thread.sleep(2500); // two intervals: every record drained
                LlamaBenchIT.signal(infertop.process.pid(), "TERM");
                assertEquals(128 + 15, infertop.waitFor(60), infertop.stderrText());
                total = infertop.finalObject();
                stderr = infertop.stderrText();
            } finally {
                tracefs.disable();
                Map<String, Long> hits = tracefs.hits();
                tracefsGraphs = Tracefs.hitsOf(hits, "graph");
                tracefsMulMats = Tracefs.hitsOf(hits, "mul_mat");
            }
            in.write("exit\n");
            in.flush();
            assertTrue(node.waitFor(60, TimeUnit.SECONDS), "the app did not exit");
        } finally {
            node.destroyForcibly();
        }
    }

    @AfterAll
    static void removeTheCopy() throws IOException {
        if (app == null || !Files.exists(app, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> files = Files.walk(app)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    /** Found without --lib, graphs counted as tracefs counts them, the layouts calibrated against the addon. */
    @Test
    void theAddonIsFoundAndItsGraphsCountedWithoutLib() {
        assertNotNull(total, "no run");
        String context = "infertop: " + total + "\napp: " + counted + "\nstderr: " + stderr;
        System.out.printf("linked-in app: %d CPU graphs (tracefs %d), %d lost records; app: %d prompt, %d generated "
                        + "tokens; infertop: %d prefill, %d decode tokens%n", total.path("cpu_graph_computes").asLong(),
                tracefsGraphs, total.path("lost_events").asLong(), counted.path("prompt_tokens").asLong(),
                counted.path("generated_tokens").asLong(), total.path("tokens_prefill").asLong(),
                total.path("tokens_decode").asLong());
        assertTrue(tracefsGraphs >= COMPLETIONS, "tracefs saw " + tracefsGraphs + " graphs: " + context);
        assertEquals(tracefsGraphs, total.path("cpu_graph_computes").asLong(), "CPU graphs: " + context);
        assertEquals(0, total.path("lost_events").asLong(), context);
        assertTrue(total.path("layers").path("graph").path("probes").toString().contains("index.node"),
                "graph probes on the addon: " + total.path("layers").path("graph"));
        String operator = total.path("layers").path("operator").toString();
        assertFalse(operator.contains("calibrate"), "layouts calibrated against the addon itself: " + operator);
        assertFalse(stderr.contains("llama.h's layout"), "llama_batch's layout from the addon's own code: " + stderr);
    }

    /**
     * The operator layer on the addon. LTO inlined ggml's node loop into the exported ggml_graph_compute, and the
     * addon was built with ggml's OpenMP code but without OpenMP, so ggml_barrier is a lone read of the thread count
     * (InlinedNodeLoop): the layer probes those reads. Every graph attributed (a wrong place would leave graphs
     * unattributed: each thread's arrivals must match the graph's node groups), and MUL_MAT's node count equal to
     * an independent tracefs count of ggml_compute_forward_mul_mat's calls (the addon computes on one thread).
     */
    @Test
    void theOperatorLayerTracesTheInlinedNodeLoop() {
        assertNotNull(total, "no run");
        JsonNode operator = total.path("layers").path("operator");
        String context = "operator layer: " + operator + "\ninfertop: " + total + "\nstderr: " + stderr;
        System.out.printf("linked-in app: operator layer %s; %d op graphs of %d CPU graphs, %d unattributed; MUL_MAT "
                        + "%d nodes (tracefs %d calls)%n", operator.path("state").asText(),
                total.path("op_graphs").asLong(), total.path("cpu_graph_computes").asLong(),
                total.path("op_graphs_unattributed").asLong(), total.path("ops").path("MUL_MAT").path("nodes").asLong(),
                tracefsMulMats);
        assertEquals("on", operator.path("state").asText(), context);
        assertTrue(operator.path("probes").toString().contains("inlined"), "the inlined loop's reads: " + context);
        assertEquals(tracefsGraphs, total.path("op_graphs").asLong(), "every graph traced (--budget 0): " + context);
        assertEquals(0, total.path("op_graphs_unattributed").asLong(), context);
        assertTrue(tracefsMulMats > 0, context);
        assertEquals(tracefsMulMats, total.path("ops").path("MUL_MAT").path("nodes").asLong(), "MUL_MAT: " + context);
    }

    /**
     * The tokens as the app counts them (its own timings). LTO inlined llama_decode into its callers: the exported
     * copy is never called, so these come only from the graphs themselves.
     */
    @Test
    void tokensAreThoseTheAppCounted() {
        assertNotNull(total, "no run");
        String context = "infertop: " + total + "\napp: " + counted;
        assertEquals(counted.path("prompt_tokens").asLong(), total.path("tokens_prefill").asLong(),
                "prompt tokens: " + context);
        // This addon decodes every token it samples, each answer's last one too: the next completion's prompt
        // then starts after it (the app's prompt_n of the later completions is only their new tokens).
        assertEquals(counted.path("generated_tokens").asLong(), total.path("tokens_decode").asLong(),
                "generated tokens decoded, each answer's last one included: " + context);
    }

    /**
     * The requests as the app timed them, told from the graphs alone (one sequence at a time: a prompt graph after
     * a generated token begins one): its count, TTFT against the app's prompt_ms (from the prompt's first batch to
     * its first output) and TPOT against its predicted_ms per generated token. Means, since the app gives one
     * figure per request.
     */
    @Test
    void requestsFromTheGraphsAreTheAppsOwn() {
        assertNotNull(total, "no run");
        JsonNode requests = total.path("requests");
        String context = "infertop: " + requests + " " + total.path("graph_tokens") + "\napp: " + counted;
        double appTtft = 0;
        double appPredictedMs = 0;
        long appPredicted = 0;
        for (JsonNode request : counted.path("requests")) {
            appTtft += request.path("prompt_ms").asDouble() / COMPLETIONS;
            appPredictedMs += request.path("predicted_ms").asDouble();
            appPredicted += request.path("predicted_n").asLong();
        }
        double appTpot = appPredictedMs / appPredicted;
        double ttft = requests.path("ttft_ms").path("mean").asDouble();
        double tpot = requests.path("tpot_ms").path("mean").asDouble();
        System.out.printf("linked-in app: %d requests from the graphs (app %d); TTFT mean %.2f ms (app %.2f); TPOT mean "
                + "%.3f ms (app %.3f)%n", requests.path("count").asLong(), COMPLETIONS, ttft, appTtft, tpot, appTpot);
        assertEquals("graphs", total.path("token_source").asText(), context);
        assertEquals(COMPLETIONS, requests.path("count").asLong(), context);
        assertEquals(COMPLETIONS, total.path("graph_tokens").path("requests").asLong(), context);
        assertEquals(COMPLETIONS, requests.path("ttft_ms").path("count").asLong(), "one TTFT per request: " + context);
        assertTrue(Math.abs(ttft - appTtft) <= 0.25 * appTtft + 2, "TTFT mean: " + context);
        assertTrue(Math.abs(tpot - appTpot) <= 0.25 * appTpot + 0.5, "TPOT mean: " + context);
    }

    /**
     * {@code infertop -- node completions.js ...}: node has no GGML code of its own and starts no process that has;
     * it dlopen's the addon while it runs (the require of @fugood/llama.node). infertop follows the command to the
     * code it loads, says that it was not stopped there, and counts every graph a tracefs uprobe on the addon
     * counts (the app loads its model 3 s after the addon: the attach comes first, as the lines' order shows, and
     * the model load's warm-up graph is counted too).
     */
    @Test
    void aLaunchedNodeIsFollowedToTheAddonItLoads() throws Exception {
        assertNotNull(app, "no app");
        Path addon = app.resolve(ADDON);
        int completions = 2;
        try (Tracefs tracefs = Tracefs.group(GROUP + "_launched")) {
            tracefs.addProbe("graph", addon, entryOffset(addon, "ggml_graph_compute"));
            tracefs.enable();
            long graphs;
            JsonNode launched;
            String launchedStderr;
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "--budget", "0", "--",
                    "node", app.resolve("completions.js").toString(), Models.preset("tiny").toString(),
                    Integer.toString(completions), "16", "2", "3000")) {
                assertEquals(0, infertop.waitFor(300), infertop.stderrText());
                List<String> lines = infertop.stderrText().lines().toList();
                int attached = indexOf(lines, "infertop: tracing pid");
                int ready = indexOf(lines, "ready ");
                assertTrue(attached >= 0 && ready > attached, "attached before the model loaded: line " + attached
                        + ", the app's ready line " + ready + "\n" + infertop.stderrText());
                launched = infertop.finalObject();
                launchedStderr = infertop.stderrText();
            } finally {
                tracefs.disable();
            }
            graphs = Tracefs.hitsOf(tracefs.hits(), "graph");
            String context = "infertop: " + launched + "\nstderr: " + launchedStderr;
            String counted = launchedStderr.lines().filter(line -> line.startsWith("{\"completions\"")).findFirst()
                    .orElseThrow(() -> new AssertionError("the app printed no result: " + context));
            JsonNode app = JSON.readTree(counted);
            System.out.printf("linked-in app, launched: %d CPU graphs (tracefs %d); app %d + %d tokens, infertop %d + %d%n",
                    launched.path("cpu_graph_computes").asLong(), graphs, app.path("prompt_tokens").asLong(),
                    app.path("generated_tokens").asLong(), launched.path("tokens_prefill").asLong(),
                    launched.path("tokens_decode").asLong());
            assertTrue(launchedStderr.contains("which loaded GGML code (index.node) while it ran"), context);
            assertTrue(graphs >= completions, "tracefs saw " + graphs + " graphs: " + context);
            assertEquals(graphs, launched.path("cpu_graph_computes").asLong(), "CPU graphs: " + context);
            // Traced from before the model load: its warm-up graph too, two prompt tokens (BOS and EOS, as
            // llama.cpp's common warm-up decodes) that the app's own timings leave out.
            assertEquals(app.path("prompt_tokens").asLong() + WARM_UP_TOKENS, launched.path("tokens_prefill").asLong(),
                    context);
            assertEquals(app.path("generated_tokens").asLong(), launched.path("tokens_decode").asLong(), context);
            assertEquals(0, launched.path("op_graphs_unattributed").asLong(), context);
        }
    }

    private static int indexOf(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    private static long entryOffset(Path library, String function) throws Exception {
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSymbol symbol = elf.function(function).filter(s -> s.sizeBytes() > 0).orElseThrow(
                    () -> new AssertionError(function + " is not a function of " + library));
            return elf.fileOffsetOf(symbol.vaddr());
        }
    }

    /** Every line the app prints, read on a thread of its own (the app logs much; its pipe must not fill). */
    private static BlockingQueue<String> readLines(BufferedReader out) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().name("linked-app-out").start(() -> {
            try (out) {
                String line;
                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the app is gone
            }
        });
        return lines;
    }

    private static String await(BlockingQueue<String> lines, String prefix, long timeoutSeconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(1, TimeUnit.SECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
        }
        throw new AssertionError("the app printed no '" + prefix + "' line within " + timeoutSeconds + " s");
    }

    private static Path copyTree(Path source, Path target) throws IOException {
        try (Stream<Path> files = Files.walk(source)) {
            for (Path file : files.toList()) {
                Path to = target.resolve(source.relativize(file).toString());
                if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(file, to, LinkOption.NOFOLLOW_LINKS, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return target;
    }
}
