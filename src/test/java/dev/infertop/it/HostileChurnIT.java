package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target that chooses a new key for everything infertop keys by: a C program (built here with cc) that exports
 * functions named as ggml's and llama.cpp's and loops, each iteration calling {@code
 * ggml_backend_graph_compute_async(backend, cgraph)} with a backend whose first field points to a 16-byte GUID
 * that changes every call, then {@code llama_decode(ctx, batch)} with a one-token batch, then starting a thread
 * that runs for a moment and exits (a thread per decode). Traced with {@code infertop --json -d 1 -p PID
 * --layers token,graph,sched --listen ...}.
 *
 * <p>Flat after warm-up: infertop's live heap (after a full collection, {@code jcmd GC.run} then {@code
 * GC.heap_info}) every 2 s from 10 s into the run (the flight recorder's 10 s window is full by then) to 40 s,
 * and the number of series its exposition holds at 10 s and at 40 s. The live heap moves by a few MB from one
 * sample to the next (the flight recorder's chunks follow the record rate), so flat means: no sample more than
 * 8 MB above the first, and a least-squares slope under 0.25 MB/s (its noise is about 0.05 MB/s; the last
 * MB or two of warm-up shows as up to 0.1). Before the caps, each thread cost the sched layer ~12 KB and each
 * GUID a backend row, a flight-recorder label and two series: at the ~2000 iterations a second this target
 * makes, tens of MB of heap a second, and thousands of series. 30 s of that after warm-up (some 60 000 new
 * GUIDs and as many threads) is enough: a cost of 128 bytes per key left anywhere would add 15 MB, past the
 * bound. What was folded is counted in {@code limits}, exactly for the backends.
 */
class HostileChurnIT {
    private static final String TARGET = """
            #include <pthread.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>

            /* ggml's backend struct starts with `ggml_guid_t guid`: a pointer to the backend's 16-byte GUID. */
            struct ggml_backend { const uint8_t *guid; void *iface; };
            /* llama.cpp's batch, passed by value: n_tokens first. */
            struct llama_batch { int32_t n_tokens; void *token, *embd, *pos, *n_seq_id, *seq_id, *logits; };

            __attribute__((noinline, used)) int ggml_backend_graph_compute_async(struct ggml_backend *backend,
                                                                                 void *cgraph) {
                __asm__ volatile("" ::: "memory");
                return backend->guid[15] == 0xff && cgraph != 0;
            }

            __attribute__((noinline, used)) int ggml_graph_compute(void *cgraph, void *cplan) {
                __asm__ volatile("" ::: "memory");
                return cgraph == cplan;
            }

            __attribute__((noinline, used)) int llama_decode(void *ctx, struct llama_batch batch) {
                __asm__ volatile("" ::: "memory");
                return batch.n_tokens < 0 && ctx != 0;
            }

            /* Sleeps once, so that the sched layer sees it come back on a CPU (a record of its tid), then exits. */
            static void *worker(void *arg) {
                volatile uint64_t sum = 0;
                usleep(20);
                for (int i = 0; i < 20000; i++) sum += (uintptr_t)arg + i;
                return 0;
            }

            int main(void) {
                uint8_t guid[16];
                struct ggml_backend backend = { guid, 0 };
                int (*volatile compute)(struct ggml_backend *, void *) = ggml_backend_graph_compute_async;
                int (*volatile decode)(void *, struct llama_batch) = llama_decode;
                printf("ready\\n");
                fflush(stdout);
                for (uint64_t i = 1;; i++) {
                    memcpy(guid, &i, 8);            /* a new GUID every call */
                    memcpy(guid + 8, "hostile!", 8);
                    compute(&backend, 0);
                    struct llama_batch batch = { .n_tokens = 1 };
                    decode(0, batch);
                    pthread_t thread;               /* a thread per decode */
                    if (pthread_create(&thread, 0, worker, (void *)(uintptr_t)i) == 0)
                        pthread_join(thread, 0);
                    usleep(100);
                }
            }
            """;
    private static final long HEAP_TOLERANCE_BYTES = 8L << 20;
    private static final double HEAP_SLOPE_LIMIT_BYTES_PER_S = 0.25e6;
    private static final long RSS_TOLERANCE_BYTES = 48L << 20;

    @TempDir
    Path dir;

    private Process target;

    @AfterEach
    void stopTarget() throws Exception {
        if (target != null) {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The live heap and the resident set of a JVM, and the series its exposition holds, at one moment. */
    private record Sample(long liveHeapBytes, long rssBytes, long series, long backendSeries, JsonNode limits) {}

    @Test
    void aNewGuidPerComputeAndAThreadPerDecodeLeaveMemoryAndSeriesFlat() throws Exception {
        Requirements.canTrace();
        Path jcmd = Path.of(ProcessHandle.current().info().command().orElse("java")).resolveSibling("jcmd");
        Requirements.require(Files.isExecutable(jcmd), "needs the JDK's jcmd beside " + jcmd.getParent());
        Path source = Files.writeString(dir.resolve("hostile-churn.c"), TARGET);
        Path binary = dir.resolve("hostile-churn");
        Process cc = new ProcessBuilder("cc", "-O2", "-pthread", "-o", binary.toString(), source.toString())
                .redirectErrorStream(true).start();
        String ccSaid = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Requirements.require(cc.waitFor(120, TimeUnit.SECONDS) && cc.exitValue() == 0, "cc: " + ccSaid);

        target = new ProcessBuilder(binary.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("ready", out.readLine());
        int port = freePort();
        HttpClient http = HttpClient.newHttpClient();
        Sample warm;
        Sample late;
        JsonNode total;
        List<Long> heapSeries = new ArrayList<>(); // every 2 s from 12 s to 38 s
        try (InfertopProcess infertop = InfertopProcess.start(Map.of(), "--json", "-d", "1", "-p",
                Long.toString(target.pid()), "--layers", "token,graph,sched", "--listen", "127.0.0.1:" + port)) {
            infertop.awaitStderr("probes attached", 120);
            infertop.awaitStdout("\"seq\":", 60);
            long firstIntervalNs = System.nanoTime();
            // Warm-up: the flight recorder's 10 s window fills, the JIT settles, every cap is reached.
            sleepUntil(firstIntervalNs, 10);
            warm = sample(infertop, jcmd, http, port);
            for (int s = 12; s < 40; s += 2) {
                sleepUntil(firstIntervalNs, s);
                heapSeries.add(liveHeapBytes(jcmd, infertop.process.pid()));
            }
            sleepUntil(firstIntervalNs, 40);
            late = sample(infertop, jcmd, http, port);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            total = infertop.finalObject();
        } finally {
            LeakCheck.assertNothingLeft();
        }
        List<Long> heap = new ArrayList<>(List.of(warm.liveHeapBytes()));
        heap.addAll(heapSeries);
        heap.add(late.liveHeapBytes());
        double slope = slope(heap, 2.0);
        System.out.printf("hostile churn: live heap %.1f MB at 10 s, %s MB every 2 s to 40 s (slope %.3f MB/s);"
                        + " RSS %.1f -> %.1f MB;"
                        + " series %d -> %d (backends %d -> %d)%nlimits at 10 s: %s%nlimits at the end: %s%n",
                warm.liveHeapBytes() / 1e6, heap.stream().map(b -> String.format("%.1f", b / 1e6)).toList(),
                slope / 1e6,
                warm.rssBytes() / 1e6, late.rssBytes() / 1e6, warm.series(), late.series(), warm.backendSeries(),
                late.backendSeries(), warm.limits(), total.path("limits"));

        // The run was hostile: tens of thousands of GUIDs and threads came after the warm-up.
        long computes = 0;
        for (JsonNode perBackend : total.path("graph_computes")) { // keyed by backend: sixteen and "other"
            computes += perBackend.asLong();
        }
        assertEquals(17, total.path("graph_computes").size(), total.path("graph_computes").toString());
        long decodes = total.path("decode_calls").asLong();
        assertTrue(computes > 20_000 && decodes > 20_000, "computes " + computes + ", decodes " + decodes);
        JsonNode limits = total.path("limits");
        assertTrue(limits.path("threads_pruned").asLong() + limits.path("thread_records_folded").asLong() > 20_000,
                "threads churned: " + limits);

        // Flat: the live heap after a full collection, every 2 s from 10 s to 40 s.
        for (long bytes : heap) {
            assertTrue(bytes - warm.liveHeapBytes() < HEAP_TOLERANCE_BYTES,
                    "live heap grew from " + warm.liveHeapBytes() + " to " + bytes + " bytes: " + heap);
        }
        assertTrue(slope < HEAP_SLOPE_LIMIT_BYTES_PER_S, "live heap grows " + slope + " bytes/s: " + heap);
        assertTrue(late.rssBytes() - warm.rssBytes() < RSS_TOLERANCE_BYTES,
                "RSS grew from " + warm.rssBytes() + " to " + late.rssBytes() + " bytes");
        // The same series 30 s apart: the 16 backends kept and "other".
        assertEquals(warm.series(), late.series(), "series in the exposition");
        assertEquals(17, late.backendSeries());

        // Limits, exactly for the backends: every GUID is new, so all computes but the first sixteen's are "other".
        assertEquals(16, limits.path("backends").asLong());
        assertEquals(16, limits.path("backends_cap").asLong());
        assertEquals(computes - 16, limits.path("backend_computes_folded").asLong(), limits.toString());
        assertEquals(computes - 16, total.path("backends").path("other").path("graphs").asLong());
        assertEquals(17, total.path("backends").size(), total.path("backends").toString());
        assertTrue(limits.path("threads").asLong() <= limits.path("threads_cap").asLong());
        assertEquals(256, limits.path("threads_cap").asLong());
        assertTrue(limits.path("threads_pruned").asLong() > 0, "threads gone from /proc pruned: " + limits);
        JsonNode sched = total.path("sched").path("threads");
        assertTrue(sched.size() <= 257 && sched.has("other"), "sched threads: " + sched.size());
    }

    /** Least-squares slope of {@code values} sampled every {@code stepSeconds}, per second. */
    private static double slope(List<Long> values, double stepSeconds) {
        int n = values.size();
        double meanX = (n - 1) * stepSeconds / 2;
        double meanY = values.stream().mapToLong(Long::longValue).average().orElse(0);
        double covariance = 0;
        double variance = 0;
        for (int i = 0; i < n; i++) {
            double dx = i * stepSeconds - meanX;
            covariance += dx * (values.get(i) - meanY);
            variance += dx * dx;
        }
        return covariance / variance;
    }

    private static void sleepUntil(long startNs, int seconds) throws InterruptedException {
        long waitNs = startNs + TimeUnit.SECONDS.toNanos(seconds) - System.nanoTime();
        if (waitNs > 0) {
            TimeUnit.NANOSECONDS.sleep(waitNs);
        }
    }

    private Sample sample(InfertopProcess infertop, Path jcmd, HttpClient http, int port) throws Exception {
        long pid = infertop.process.pid();
        long heap = liveHeapBytes(jcmd, pid);
        long rss = rssBytes(pid);
        String exposition = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        long series = exposition.lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
        long backends = exposition.lines().filter(l -> l.startsWith("infertop_graph_computes_total{")).count();
        List<JsonNode> lines = infertop.jsonLines();
        return new Sample(heap, rss, series, backends, lines.getLast().path("limits"));
    }

    /** The heap in use after a full collection (SerialGC: young and old generation), from jcmd. */
    private static long liveHeapBytes(Path jcmd, long pid) throws Exception {
        run(jcmd.toString(), Long.toString(pid), "GC.run");
        String info = run(jcmd.toString(), Long.toString(pid), "GC.heap_info");
        // "DefNew total 5568K, used 2390K [...]" and "Tenured total ..." (JDK 25; older: "def new generation").
        Matcher used = Pattern.compile("(DefNew|Tenured|def new generation|tenured generation)\\s+total \\d+K,"
                + " used (\\d+)K").matcher(info);
        long bytes = 0;
        int generations = 0;
        while (used.find()) {
            bytes += Long.parseLong(used.group(2)) * 1024;
            generations++;
        }
        assertEquals(2, generations, "jcmd GC.heap_info:\n" + info);
        return bytes;
    }

    private static long rssBytes(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new AssertionError("no VmRSS for " + pid);
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " hung");
        assertEquals(0, process.exitValue(), String.join(" ", command) + ":\n" + output);
        return output;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
