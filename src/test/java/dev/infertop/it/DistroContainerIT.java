package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.ElfFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The newest llama.cpp where users run it: Debian sid's own packages (llama.cpp-tools, libllama0, libggml0,
 * llama.cpp-services; built by nobody here) in a root with sid's libc, started as a container runtime starts a
 * tool (own mount and PID namespaces, an overlay root the host cannot open by the paths the tool's maps show).
 * Their tools call {@code llama_process} with a {@code llama_batch_ext}, never llama_decode; their CPU variants
 * are dlopen'ed from a backends directory, built with OpenMP, and stripped of .symtab. infertop on the host must
 * count what the tools did, calibrate the operator layer in the container's own root (with the container's libc),
 * and find the node loop in the stripped variant.
 *
 * <p>llama-bench {@code -p 64 -n 32 -r 3} makes 4 prompt calls of 64 tokens and 97 calls of one token (as the
 * source build does, {@link LlamaBenchIT}); this release gives every token a position, so each of the 4
 * generation runs (a warm-up and 3 repetitions, each on a cleared memory) begins a sequence at position 0, and
 * that first token is the sequence's prompt: 4 × 64 + 4 = 260 prompt tokens, 97 − 4 = 93 generated.
 */
class DistroContainerIT {
    private static final String LIBLLAMA = "/usr/lib/x86_64-linux-gnu/libllama.so.0";
    private static final long CALLS = 4 + 97;
    private static final long PROMPT_TOKENS = 4 * 64 + 4;
    private static final long GENERATED_TOKENS = 97 - 4;

    private static Path root;
    private static Path models;
    /** The CPU variant ggml keeps here: a tool is stopped once it is mapped, before its first call. */
    private static String cpuVariant;
    private final List<Process> containers = new ArrayList<>();

    @BeforeAll
    static void requirements() throws Exception {
        Requirements.canTrace();
        root = Containers.debianRoot();
        models = Models.preset("tiny").getParent();
        cpuVariant = Containers.cpuVariant(root, models);
    }

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            Containers.stop(container);
        }
        LeakCheck.assertNothingLeft();
    }

    private Process container(List<String> runnerOptions, String... command) throws Exception {
        Process container = Containers.start(root, models, runnerOptions, command);
        containers.add(container);
        return container;
    }

    private Process bench() throws Exception {
        return container(List.of(), "/usr/bin/llama-bench", "-m", "/models/" + Models.preset("tiny").getFileName(),
                "-p", "64", "-n", "32", "-r", "3", "-t", "2");
    }

    /** Attaches to the container's llama-bench before its first call (stopped meanwhile); its final object. */
    private static JsonNode traceBench(Process container, String... extraArguments) throws Exception {
        return traceBench(container, () -> 0, extraArguments);
    }

    /**
     * As {@link #traceBench(Process, String...)}; {@code callsSoFar} counts the tool's calls independently, read the
     * moment it is stopped: above 0, the stop came after its first call or batch (a loaded machine), and the run's final
     * object says so with {@code "stopped_late": true} for the caller to run again.
     */
    private static JsonNode traceBench(Process container, java.util.function.LongSupplier callsSoFar,
                                       String... extraArguments) throws Exception {
        return traceBench(container, pid -> callsSoFar.getAsLong(), extraArguments);
    }

    /** As above, {@code callsSoFar} given the stopped tool's pid. */
    private static JsonNode traceBench(Process container, java.util.function.LongUnaryOperator callsSoFar,
                                       String... extraArguments) throws Exception {
        // Stopped once the model is mapped too: ggml maps each variant to score it, unmaps it and maps the best
        // again, so the variant's first code mapping is no sign the choice is over; the model comes after it.
        long pid = Containers.awaitTool(container, "llama-bench", 60, List.of("/libllama.so", "/" + cpuVariant),
                List.of(Models.preset("tiny").getFileName().toString()));
        Containers.signal(pid, Containers.SIGSTOP);
        boolean late = callsSoFar.applyAsLong(pid) > 0;
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(List.of(extraArguments));
        args.addAll(List.of("-p", Long.toString(pid)));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            infertop.awaitStderr("probes attached", 120);
            Containers.signal(pid, Containers.SIGCONT);
            assertTrue(container.waitFor(240, TimeUnit.SECONDS), "llama-bench finished in its container");
            assertEquals(0, container.exitValue(), "llama-bench's exit status");
            assertEquals(0, infertop.waitFor(60), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            // What infertop said on the way (late attaches, skipped libraries), beside the counts it is checked by.
            ((com.fasterxml.jackson.databind.node.ObjectNode) total).put("infertop_stderr", infertop.stderrText());
            if (late) {
                ((com.fasterxml.jackson.databind.node.ObjectNode) total).put("stopped_late", true);
            }
            return total;
        }
    }

    private static void assertBenchCounts(JsonNode total) {
        String context = total + "\n(" + Containers.debianVersions() + ")";
        assertEquals(CALLS, total.get("decode_calls").asLong(), "llama_process calls: " + context);
        assertEquals(PROMPT_TOKENS, total.get("tokens_prefill").asLong(), "prompt tokens: " + context);
        assertEquals(GENERATED_TOKENS, total.get("tokens_decode").asLong(), "generated tokens: " + context);
        assertEquals(0, total.get("failed_calls").asLong(), context);
        assertEquals(0, total.get("encode_calls").asLong(), context);
        assertEquals(CALLS, total.get("cpu_graph_computes").asLong(), "one CPU graph per call: " + context);
        assertEquals(0, total.get("lost_events").asLong(), context);
        assertEquals("on", total.get("layers").get("token").get("state").asText(), context);
        assertTrue(total.get("layers").get("token").get("probes").toString().contains("llama_process (entry and return)"),
                "the newest entry point probed: " + total.get("layers").get("token"));
    }

    /**
     * Counted independently: tracefs uprobes on the root's own libllama (the file under the overlay's lower
     * directory: a uprobe is on the inode, so the container's calls hit it) count llama_process and
     * llama_batch_ext_add_token calls, a token each. The operator layer is calibrated inside the container's root
     * (sid's glibc is newer than the host's: the host's loader cannot load its libraries) and probes the node loop
     * of the stripped, dlopen'ed CPU variant: every sampled graph attributed.
     */
    @Test
    void llamaBenchInAContainerIsCountedAsItsOwnLibllamaCountsIt() throws Exception {
        Tracefs.require();
        Path libllama = Containers.hostFile(root, LIBLLAMA);
        JsonNode total;
        long processCalls;
        long tokensAdded;
        try (Tracefs oracle = Tracefs.group("infertop_distro_it"); ElfFile elf = ElfFile.open(libllama)) {
            oracle.addProbe("process", libllama, elf.fileOffsetOf(elf.function("llama_process").orElseThrow().vaddr()));
            oracle.addProbe("add_token", libllama,
                    elf.fileOffsetOf(elf.function("llama_batch_ext_add_token").orElseThrow().vaddr()));
            for (int attempt = 1; ; attempt++) {
                oracle.enable();
                long base = Tracefs.hitsOf(oracle.hits(), "process");
                long baseTokens = Tracefs.hitsOf(oracle.hits(), "add_token");
                total = traceBench(bench(), () -> {
                    try {
                        // A batch is built (its tokens added) before the call that computes it: either is late.
                        Map<String, Long> soFar = oracle.hits();
                        return Tracefs.hitsOf(soFar, "process") - base + Tracefs.hitsOf(soFar, "add_token") - baseTokens;
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                oracle.disable();
                Map<String, Long> hits = oracle.hits();
                processCalls = Tracefs.hitsOf(hits, "process") - base;
                tokensAdded = Tracefs.hitsOf(hits, "add_token") - baseTokens;
                if (!total.path("stopped_late").asBoolean() || attempt == 3) {
                    break;
                }
                System.out.println("distro: llama-bench ran its first call before it was stopped (attempt " + attempt
                        + "): again");
            }
        }
        System.out.printf("distro: llama-bench in a container (%s): llama_process %d (tracefs %d), tokens %d + %d "
                        + "(tracefs add_token %d), graphs %d, op graphs %d (%d unattributed)%n",
                Containers.debianVersions(), total.get("decode_calls").asLong(), processCalls,
                total.get("tokens_prefill").asLong(), total.get("tokens_decode").asLong(), tokensAdded,
                total.get("cpu_graph_computes").asLong(), total.get("op_graphs").asLong(),
                total.get("op_graphs_unattributed").asLong());
        assertEquals(processCalls, total.get("decode_calls").asLong(), "tracefs's llama_process count: " + total);
        assertEquals(tokensAdded, total.get("tokens_prefill").asLong() + total.get("tokens_decode").asLong(),
                "tracefs's llama_batch_ext_add_token count: " + total);
        assertBenchCounts(total);
        JsonNode operator = total.get("layers").get("operator");
        assertEquals("on", operator.get("state").asText(), "operator layer: " + operator);
        assertTrue(operator.get("probes").toString().contains("stripped library: ggml_graph_compute_thread"),
                "the node loop found in the stripped CPU variant: " + operator);
        assertTrue(total.get("op_graphs").asLong() > 0, "graphs traced by the operator layer: " + total);
        assertEquals(0, total.get("op_graphs_unattributed").asLong(), "graphs the operator layer could not follow");
        assertTrue(total.get("ops").toString().contains("MUL_MAT"), "ops named by the target's own ggml: " + total);
    }

    /**
     * Two containers from one image at once (the same library inodes, so both hit each probe): infertop counts the
     * one it traces only. The other runs beside from before the start to the end. The chosen one is launched
     * through infertop (the container runner, followed to its llama-bench and held there before its first
     * instruction) rather than stopped by polling its maps, which a loaded machine lets it run past; the -p attach
     * to a container is the other tests'. The other's llama-bench runs until the test stops it: on a quiet machine
     * a million repetitions on the tiny model outlast it.
     */
    @Test
    void twoContainersFromOneRootCountOnlyTheChosenOne() throws Exception {
        Tracefs.require();
        Process other = container(List.of(), "/usr/bin/llama-bench", "-m",
                "/models/" + Models.preset("tiny").getFileName(), "-p", "0", "-n", "32", "-r", "1000000", "-t", "1");
        long otherPid = Containers.awaitTool(other, "llama-bench", 60, "/libllama.so", "/" + cpuVariant);
        Path libllama = Containers.hostFile(root, LIBLLAMA);
        JsonNode total;
        long tokensAdded;
        try (Tracefs oracle = Tracefs.group("infertop_distro_two"); ElfFile elf = ElfFile.open(libllama)) {
            oracle.addProbe("add_token", libllama,
                    elf.fileOffsetOf(elf.function("llama_batch_ext_add_token").orElseThrow().vaddr()));
            oracle.enable();
            long base = Tracefs.hitsOf(oracle.hits(), "add_token");
            List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--", "bash",
                    Containers.RUNNER.toString(), "--models", models.toString(), root.toString(), "--",
                    "/usr/bin/llama-bench", "-m", "/models/" + Models.preset("tiny").getFileName(), "-p", "64", "-n",
                    "32", "-r", "3", "-t", "2"));
            try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
                assertEquals(0, infertop.waitFor(300), infertop.stderrText());
                total = infertop.finalObject();
                ((com.fasterxml.jackson.databind.node.ObjectNode) total).put("infertop_stderr", infertop.stderrText());
            }
            tokensAdded = Tracefs.hitsOf(oracle.hits(), "add_token") - base;
        }
        System.out.printf("distro: two containers: the chosen one's calls %d, prompt tokens %d; tokens both added "
                + "meanwhile %d%n", total.get("decode_calls").asLong(), total.get("tokens_prefill").asLong(), tokensAdded);
        assertEquals("llama-bench", total.get("command").asText(), "the engine is what is traced: " + total);
        assertNotEquals(otherPid, total.get("pid").asLong(), "the chosen container's llama-bench: " + total);
        assertEquals("exited", total.get("target_state").asText(), total.toString());
        assertTrue(tokensAdded > PROMPT_TOKENS + GENERATED_TOKENS,
                "the other container added tokens beside the chosen one (" + tokensAdded + " in all)");
        assertBenchCounts(total);
        assertTrue(other.isAlive(), "the other container kept running beside");
    }

    /**
     * The distribution's llama-server in a container with 4 slots, fed concurrent requests of different lengths
     * ({@link ServingIT}'s): prompt tokens, generated tokens and decode calls are the server's own counters.
     */
    @Test
    void llamaServerInAContainerMatchesItsOwnMetrics() throws Exception {
        int port = freePort();
        Process server = container(List.of(), "/usr/bin/llama-server", "-m",
                "/models/" + Models.preset("tiny").getFileName(), "-np", "4", "-c", "4096", "--metrics", "--host",
                "127.0.0.1", "--port", Integer.toString(port), "-t", "2");
        assertTrue(HttpReady.await("http://127.0.0.1:" + port + "/health", server, 120, () -> "llama-server"),
                "llama-server ready in its container");
        long pid = Containers.awaitTool(server, "llama-server", 30, "/libllama.so");
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "-p", Long.toString(pid))) {
            infertop.awaitStderr("probes attached", 120);
            Thread.sleep(1500);
            List<JsonNode> timings = ServingIT.completions(port);
            Map<String, Double> metrics = ServingIT.metrics(port);
            Thread.sleep(2500);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            JsonNode requests = total.path("requests");
            String context = "infertop: " + total + "\nserver: " + metrics + "\n(" + Containers.debianVersions() + ")";
            System.out.printf("distro: llama-server in a container: prompt tokens %d (server %d), decode calls %d "
                            + "(server %d), generated %d (server %d), requests %d%n",
                    total.path("tokens_prefill").asLong(), metrics.get("llamacpp:prompt_tokens_total").longValue(),
                    total.path("decode_calls").asLong(), metrics.get("llamacpp:n_decode_total").longValue(),
                    requests.path("generated_tokens").asLong(),
                    metrics.get("llamacpp:tokens_predicted_total").longValue(), requests.path("count").asLong());
            assertEquals(metrics.get("llamacpp:prompt_tokens_total").longValue(), total.path("tokens_prefill").asLong(),
                    "prompt tokens: " + context);
            assertEquals(metrics.get("llamacpp:n_decode_total").longValue(), total.path("decode_calls").asLong(),
                    "llama_process calls: " + context);
            assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue(),
                    requests.path("generated_tokens").asLong(), "generated tokens: " + context);
            assertEquals(metrics.get("llamacpp:tokens_predicted_total").longValue() - ServingIT.REQUESTS,
                    total.path("tokens_decode").asLong(), "generated tokens decoded: " + context);
            assertEquals(ServingIT.REQUESTS, requests.path("count").asLong(), context);
            assertEquals(0, requests.path("batches_unread").asLong(), context);
            assertEquals(ServingIT.REQUESTS * (ServingIT.PREDICT - 1L), requests.path("tpot_ms").path("count").asLong(),
                    context);
            double serverTtft = timings.stream().mapToDouble(t -> t.path("prompt_ms").asDouble()).average().orElseThrow();
            double ttft = requests.path("ttft_ms").path("mean").asDouble();
            System.out.printf("distro: TTFT mean infertop %.2f ms, server %.2f ms%n", ttft, serverTtft);
            // On the tiny model a prompt takes a few ms, and the server's prompt_ms also holds its own work around
            // the decode calls (the batch assembled, a prompt waiting for other slots' steps): several ms on a
            // busy 2-core machine, as much as the prompt. infertop's figure is the decode part: not above the
            // server's, and not below half of it. ServingIT compares the two closely where a prompt takes seconds.
            assertTrue(ttft <= 1.25 * serverTtft + 2 && ttft >= 0.5 * serverTtft - 2, "TTFT mean " + ttft
                    + " ms against the server's " + serverTtft + " ms: " + context);
            assertEquals(0, total.path("lost_events").asLong(), context);
        }
    }

    /**
     * Speculative decoding in the distribution's llama-server (draft-simple, drafts of up to 4 tokens, one slot,
     * greedy), whose target and draft contexts both decode through llama_process: the target's prompt tokens,
     * calls and generated tokens, and the drafts and kept drafts, as the server's own counters say. With the
     * target as its own draft every draft is kept; with a different draft model, fewer.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "target {0}, draft {1}")
    @org.junit.jupiter.params.provider.CsvSource({"tiny, tiny", "deep, tiny"})
    void speculativeDecodingInAContainerMatchesTheServersCounters(String target, String draft) throws Exception {
        int port = freePort();
        Process server = container(List.of(), "/usr/bin/llama-server", "-m",
                "/models/" + Models.preset(target).getFileName(), "-md", "/models/" + Models.preset(draft).getFileName(),
                "--spec-type", "draft-simple", "--spec-draft-n-max", "4", "-np", "1", "-c", "2048", "--metrics",
                "--host", "127.0.0.1", "--port", Integer.toString(port), "-t", "2");
        assertTrue(HttpReady.await("http://127.0.0.1:" + port + "/health", server, 120, () -> "llama-server"),
                "llama-server ready in its container");
        long pid = Containers.awaitTool(server, "llama-server", 30, "/libllama.so");
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "1", "--layers", "token", "-p",
                Long.toString(pid))) {
            infertop.awaitStderr("probes attached", 120);
            Thread.sleep(1500);
            int requests = 3;
            ServingIT.greedyCompletions(port, requests);
            Map<String, Double> metrics = ServingIT.metrics(port);
            Thread.sleep(2500);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            ServingIT.assertSpeculativeAsTheServerCounts("distro", total, metrics, target, draft, requests,
                    "\n(" + Containers.debianVersions() + ")");
        }
    }

    /**
     * The packaged service (llama.cpp-services: User=_llama-server, ExecStart=/usr/bin/llama-server, its settings
     * from the environment) run as that user in a container, and restarted: {@code --follow llama-server
     * --any-user} traces it, says whose it is, and follows it to its next process.
     */
    @Test
    void followTracesThePackagedServiceAcrossARestart() throws Exception {
        String unit = Files.readString(root.resolve("usr/lib/systemd/system/llama-server.service"));
        String user = unitValue(unit, "User");
        String command = unitValue(unit, "ExecStart");
        assertEquals("_llama-server", user, unit);
        int uid = Integer.parseInt(Processes.output("id", "-u", user).strip());
        int gid = Integer.parseInt(Processes.output("id", "-g", user).strip());
        int port = freePort();
        List<String> serviceOptions = List.of("--user", uid + ":" + gid, "--env", "LLAMA_CACHE=/var/cache/llama-server",
                "--env", "LLAMA_ARG_MODEL=/models/" + Models.preset("tiny").getFileName(), "--env",
                "LLAMA_ARG_HOST=127.0.0.1", "--env", "LLAMA_ARG_PORT=" + port, "--env", "LLAMA_ARG_THREADS=2");
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--layers", "token,graph",
                "--follow", "llama-server", "--any-user")) {
            Process first = container(serviceOptions, command);
            assertTrue(HttpReady.await("http://127.0.0.1:" + port + "/health", first, 120, () -> "llama-server"));
            long firstPid = tracedPid(infertop, 0);
            assertEquals(uid, ownerOf(firstPid), "the service runs as " + user);
            infertop.awaitStderr("runs as", 30);
            completion(port);
            Containers.stop(first);
            Process second = container(serviceOptions, command);
            assertTrue(HttpReady.await("http://127.0.0.1:" + port + "/health", second, 120, () -> "llama-server"));
            long secondPid = tracedPid(infertop, 1);
            assertNotEquals(firstPid, secondPid, infertop.stderrText());
            completion(port);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long decoded = 0;
            while (decoded == 0 && System.nanoTime() < deadline) {
                Thread.sleep(500);
                decoded = infertop.jsonLines().stream().filter(o -> o.path("pid").asLong() == secondPid)
                        .mapToLong(o -> o.path("decode_calls").asLong()).max().orElse(0);
            }
            assertTrue(decoded > 0, "the restarted service's calls counted: " + infertop.stderrText());
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            infertop.waitFor(30);
        }
    }

    private static String unitValue(String unit, String key) {
        Matcher matcher = Pattern.compile("(?m)^" + key + "=(\\S+)").matcher(unit);
        assertTrue(matcher.find(), key + "= in the packaged unit:\n" + unit);
        return matcher.group(1);
    }

    /** The pid of the {@code index}-th "tracing pid N" line on infertop's stderr, waiting for it. */
    private static long tracedPid(InfertopProcess infertop, int index) throws Exception {
        Pattern tracing = Pattern.compile("infertop: tracing pid (\\d+) ");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            List<Long> pids = new ArrayList<>();
            synchronized (infertop.stderr) {
                for (String line : infertop.stderr) {
                    Matcher matcher = tracing.matcher(line);
                    if (matcher.find()) {
                        pids.add(Long.parseLong(matcher.group(1)));
                    }
                }
            }
            if (pids.size() > index) {
                return pids.get(index);
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no tracing line #" + (index + 1) + "; stderr:\n" + infertop.stderrText());
    }

    private static int ownerOf(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("Uid:")) {
                return Integer.parseInt(line.substring(4).strip().split("\\s+")[1]);
            }
        }
        throw new AssertionError("no Uid line for pid " + pid);
    }

    private static void completion(int port) throws Exception {
        var client = java.net.http.HttpClient.newHttpClient();
        var response = client.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + "/completion"))
                .timeout(java.time.Duration.ofSeconds(120)).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"prompt\":\"Once upon a time\",\"n_predict\":8,\"cache_prompt\":false}"))
                .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
    }

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
