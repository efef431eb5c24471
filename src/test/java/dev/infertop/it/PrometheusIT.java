package dev.infertop.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.metrics.LatencyBuckets;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real Prometheus (Debian's {@code prometheus}, our own process, config and data directory, loopback only)
 * scrapes {@code infertop --json --listen} every second while infertop traces llama-bench on the tiny model;
 * then its query API must give infertop's own JSON figures.
 *
 * <p>Why the comparison is exact: after ~20 s of scraping the test stops llama-bench (SIGSTOP). No llama_decode
 * completes after that, so from the next tick on every snapshot, every scrape and the final JSON object hold
 * the same totals: the value Prometheus scraped last must equal the final object's {@code tokens_decode}
 * to the token (and the TPOT histogram's count its {@code tpot_ms.count}). The test waits until infertop's
 * JSON shows two idle intervals and Prometheus has scraped twice more, then queries, then stops infertop.
 *
 * <p>The endpoint against hostile clients and with --web-config is checked the same way, with infertop waiting
 * for a process that never comes ({@code --follow}): a stalled client beside Prometheus's scrapes, https
 * with basic auth, and clients sending wrong passwords beside Prometheus's scrapes.
 */
class PrometheusIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
    private static final Path PROMTOOL = Path.of("/usr/bin/promtool");
    private static final Path OPENSSL = Path.of("/usr/bin/openssl");
    private static final long SCRAPE_SECONDS = 20;

    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        Requirements.require(Files.isExecutable(PROMETHEUS) && Files.isExecutable(PROMTOOL),
                "needs Prometheus and promtool (apt-get install -y prometheus)");
        tinyModel = Models.preset("tiny");
    }

    @Test
    void prometheusScrapesWhatTheJsonSays(@TempDir Path directory) throws Exception {
        int infertopPort = freePort();
        int prometheusPort = freePort();
        long benchPid = -1;
        Process prometheus = null;
        Throwable primary = null;
        Path bench = workload.sourceBuildTool("llama-bench");
        try (InfertopProcess infertop = InfertopProcess.start("--json", "--listen", "127.0.0.1:" + infertopPort, "--",
                bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "64,64", "-r", "1000000",
                "-t", "2")) {
            infertop.awaitStderr("serving metrics at http://127.0.0.1:" + infertopPort + "/metrics", 30);
            infertop.awaitStderr("probes attached", 60);
            prometheus = startPrometheus(directory, prometheusPort, infertopPort);
            infertop.awaitStdout("\"seq\":", 30);
            benchPid = infertop.jsonLines().getFirst().get("pid").asLong();

            // The Prometheus text format, as a scrape asking for it gets it, passes promtool's checks and lints.
            Path scraped = directory.resolve("metrics.prom");
            HttpResponse<String> text = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + infertopPort + "/metrics"))
                    .header("Accept", "text/plain;version=0.0.4").timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, text.statusCode());
            assertTrue(text.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            Files.writeString(scraped, text.body());
            Process promtool = new ProcessBuilder(PROMTOOL.toString(), "check", "metrics")
                    .redirectInput(scraped.toFile()).redirectErrorStream(true).start();
            String promtoolSaid = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(promtool.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, promtool.exitValue(), "promtool check metrics:\n" + promtoolSaid + "\n" + text.body());

            Thread.sleep(TimeUnit.SECONDS.toMillis(SCRAPE_SECONDS));
            double scrapedWhileRunning = queryValue(prometheusPort, "infertop_decode_tokens_total");
            assertTrue(scrapedWhileRunning > 0, "decode tokens scraped while llama-bench runs");
            assertTrue(queryValue(prometheusPort, "rate(infertop_decode_tokens_total[10s])") > 0, "tokens/s as rate()");
            assertDashboardQueriesAnswer(prometheusPort);

            LlamaBenchIT.signal(benchPid, "STOP"); // the run is over; Prometheus keeps scraping its totals
            awaitIdleIntervals(infertop, 2, 30);
            double lastScrapeSeconds = queryValue(prometheusPort, "timestamp(infertop_decode_tokens_total)");
            awaitScrapedAfter(prometheusPort, lastScrapeSeconds + 1.5, 15);

            double decodeTokens = queryValue(prometheusPort, "infertop_decode_tokens_total");
            double tpotCount = queryValue(prometheusPort, "infertop_tpot_seconds_count");
            double tpotP50Seconds = queryValue(prometheusPort, "histogram_quantile(0.5, infertop_tpot_seconds_bucket)");
            JsonNode matmul = query(prometheusPort,
                    "infertop_op_duration_seconds_bucket{op=\"MUL_MAT\",backend=\"CPU\",le=\"+Inf\"}");
            JsonNode info = query(prometheusPort, "infertop_target_info");
            // Which source the token counters have, and the graphs' own count beside them: both exist on this build.
            JsonNode source = query(prometheusPort, "infertop_token_source_info");
            double graphDecodeTokens = queryValue(prometheusPort, "infertop_graph_decode_tokens_total");

            // SIGTERM with kill (Process.destroy() would also close our end of its stdout): the final object.
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(60), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            double jsonP50Seconds = total.get("tpot_ms").get("p50").asDouble() / 1e3;
            System.out.printf("PrometheusIT: decode tokens scraped %.0f, JSON %d; TPOT count scraped %.0f, JSON %d; "
                            + "TPOT p50 histogram_quantile %.6f s, JSON (HdrHistogram) %.6f s; MUL_MAT series %d%n",
                    decodeTokens, total.get("tokens_decode").asLong(), tpotCount,
                    total.get("tpot_ms").get("count").asLong(), tpotP50Seconds, jsonP50Seconds, matmul.size());

            assertEquals(total.get("tokens_decode").asLong(), (long) decodeTokens, "scraped total = final JSON total");
            assertEquals(total.get("tpot_ms").get("count").asLong(), (long) tpotCount);
            assertTrue(decodeTokens >= scrapedWhileRunning);
            double[] bucket = bucketAround(jsonP50Seconds);
            assertTrue(tpotP50Seconds >= bucket[0] && tpotP50Seconds <= bucket[1], "histogram_quantile p50 "
                    + tpotP50Seconds + " s outside the bucket (" + bucket[0] + ", " + bucket[1]
                    + "] that holds the JSON's p50 " + jsonP50Seconds + " s");
            assertEquals(1, matmul.size(), "one MUL_MAT series on the CPU backend: " + matmul);
            assertTrue(matmul.get(0).get("value").get(1).asDouble() > 0);
            assertEquals(1, source.size(), "one token source series: " + source);
            assertEquals("api", source.get(0).get("metric").get("source").asText(), source.toString());
            assertEquals(total.path("token_source").asText(), source.get(0).get("metric").get("source").asText());
            assertEquals(total.path("graph_tokens").path("generated_tokens").asLong(), (long) graphDecodeTokens,
                    "the graphs' generated tokens scraped = final JSON");
            // One sequence at a time: the graphs' generated tokens are the API's, but for the call SIGSTOP may have
            // caught between its graph's end and its own return (its graph counted, the call not yet). A lost
            // record is missing from its count, never guessed: each can move the two one token further apart.
            long graphAhead = (long) graphDecodeTokens - total.get("tokens_decode").asLong();
            long lost = total.get("lost_events").asLong();
            assertTrue(graphAhead <= 1 + lost && graphAhead >= -lost,
                    "the graphs' generated tokens against the API's: " + graphDecodeTokens + " vs " + total.get("tokens_decode") + ", " + lost + " records lost");
            assertEquals(1, info.size(), info.toString());
            assertEquals(Long.toString(benchPid), info.get(0).get("metric").get("pid").asText());
            assertEquals("llama-bench", info.get(0).get("metric").get("command").asText());
            assertTrue(info.get(0).get("metric").get("model").asText().endsWith(".gguf"), info.toString());
            assertTrue(info.get(0).get("metric").get("llama_cpp_build").asText().matches("[0-9a-f]{40}"),
                    info.toString());
        } catch (Throwable failure) {
            primary = failure;
            throw failure;
        } finally {
            Processes.killIfAlive(benchPid);
            stop(prometheus);
            assertNothingLeft(primary);
        }
    }

    /** The per-op query the man page documents (PROMETHEUS METRICS): MUL_MAT node groups per second. */
    static final String ESTIMATED_MUL_MAT_RATE = "rate(infertop_op_estimated_groups_total{op=\"MUL_MAT\"}[15s])";
    /** What that query is held against: the traced count's rate with every graph traced. */
    static final String TRACED_MUL_MAT_RATE = "rate(infertop_op_duration_seconds_count{op=\"MUL_MAT\"}[15s])";
    static final long EVALUATED_SECONDS = 30;
    static final long STEP_SECONDS = 5;
    /**
     * Each evaluation agrees with --budget 0 within this share, and their mean within {@link #MEAN_TOLERANCE}: the
     * two infertops tick at their own times, so the 15 s ranges hold the same graphs only to a tick at each end (a
     * tick of 1 s in 15 s: about 7 % each way), and the estimate scales the windows' node groups per graph.
     */
    static final double EVALUATION_TOLERANCE = 0.20;
    static final double MEAN_TOLERANCE = 0.10;

    /**
     * The documented per-op query over half a minute of a real Prometheus's evaluations: with the default budget
     * (windows of 0.25 s every 30 s on a machine where traps are dear) it gives a non-zero MUL_MAT rate at every
     * evaluation, where the traced count's own rate is 0 between windows, and agrees with the traced count of
     * an infertop with {@code --budget 0} attached to the same llama-bench at the same time (one target, one
     * pace: both see the slowdown full tracing brings).
     */
    @Test
    void theEstimatedOpRateHasAFigureAtEveryEvaluationAndAgreesWithFullTracing(@TempDir Path directory)
            throws Exception {
        int sampledPort = freePort();
        int fullPort = freePort();
        int prometheusPort = freePort();
        Process prometheus = null;
        Process bench = new ProcessBuilder(workload.sourceBuildTool("llama-bench").toString(), "-m",
                Models.preset("bench").toString(), "-p", "0", "-n", "64", "-r", "1000000", "-t", "1")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Throwable primary = null;
        try (InfertopProcess sampled = InfertopProcess.start("--quiet", "--listen", "127.0.0.1:" + sampledPort, "-p",
                Long.toString(bench.pid()));
             InfertopProcess full = InfertopProcess.start("--quiet", "--budget", "0", "--listen",
                     "127.0.0.1:" + fullPort, "-p", Long.toString(bench.pid()))) {
            sampled.awaitStderr("probes attached", 60);
            full.awaitStderr("probes attached", 60);
            prometheus = startPrometheus(directory, prometheusPort, """
                      - job_name: sampled
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                      - job_name: full
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                    """.formatted(sampledPort, fullPort));
            // The sampled infertop's first window (2 s) and one 15 s range of scrapes before the first evaluation.
            awaitQuery(prometheusPort, "infertop_op_estimated_groups_total{job=\"sampled\",op=\"MUL_MAT\"} > 0", 60);
            Thread.sleep(TimeUnit.SECONDS.toMillis(16 + EVALUATED_SECONDS));
            double endSeconds = System.currentTimeMillis() / 1000.0;
            double startSeconds = endSeconds - EVALUATED_SECONDS;
            double[] estimated = range(prometheusPort, ESTIMATED_MUL_MAT_RATE.replace("{", "{job=\"sampled\","),
                    startSeconds, endSeconds);
            double[] traced = range(prometheusPort, TRACED_MUL_MAT_RATE.replace("{", "{job=\"full\","),
                    startSeconds, endSeconds);
            double[] windowsOnly = range(prometheusPort, TRACED_MUL_MAT_RATE.replace("{", "{job=\"sampled\","),
                    startSeconds, endSeconds);
            double sampledRatio = queryValue(prometheusPort, "infertop_operator_sampled_ratio{job=\"sampled\"}");
            StringBuilder table = new StringBuilder();
            double estimatedSum = 0;
            double tracedSum = 0;
            for (int i = 0; i < estimated.length; i++) {
                table.append(String.format(java.util.Locale.ROOT, "%n  +%2d s  estimated %8.1f/s  --budget 0 %8.1f/s  "
                                + "ratio %.3f  sampled infertop's traced count %8.1f/s", i * STEP_SECONDS,
                        estimated[i], traced[i], estimated[i] / traced[i], windowsOnly[i]));
                estimatedSum += estimated[i];
                tracedSum += traced[i];
            }
            System.out.printf("PrometheusIT: %s over %d s (operator sampled ratio %.4f), against %s with --budget 0:%s"
                    + "%n  mean ratio %.3f%n", ESTIMATED_MUL_MAT_RATE, EVALUATED_SECONDS, sampledRatio,
                    TRACED_MUL_MAT_RATE, table, estimatedSum / tracedSum);
            assertEquals(EVALUATED_SECONDS / STEP_SECONDS + 1, estimated.length, table.toString());
            for (int i = 0; i < estimated.length; i++) {
                assertTrue(estimated[i] > 0, "no MUL_MAT rate at +" + i * STEP_SECONDS + " s:" + table);
                assertTrue(Math.abs(estimated[i] / traced[i] - 1) <= EVALUATION_TOLERANCE,
                        "+" + i * STEP_SECONDS + " s:" + table);
            }
            assertTrue(Math.abs(estimatedSum / tracedSum - 1) <= MEAN_TOLERANCE, table.toString());
        } catch (Throwable failure) {
            primary = failure;
            throw failure;
        } finally {
            bench.destroyForcibly();
            bench.waitFor(10, TimeUnit.SECONDS);
            stop(prometheus);
            assertNothingLeft(primary);
        }
    }

    /** The values of {@code promql} (one series) from {@code startSeconds} to {@code endSeconds}, every STEP_SECONDS. */
    private double[] range(int port, String promql, double startSeconds, double endSeconds) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/api/v1/query_range?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)
                        + String.format(java.util.Locale.ROOT, "&start=%.3f&end=%.3f&step=%d", startSeconds,
                        endSeconds, STEP_SECONDS)))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), promql + ": " + response.body());
        JsonNode result = JSON.readTree(response.body()).get("data").get("result");
        assertEquals(1, result.size(), promql + " gives " + result);
        JsonNode values = result.get(0).get("values");
        double[] out = new double[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Double.parseDouble(values.get(i).get(1).asText());
        }
        return out;
    }

    /** A port that is taken is one line and exit status 2, before any probe is attached. */
    @Test
    void aTakenPortEndsBeforeAnyProbe() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             InfertopProcess infertop = InfertopProcess.start("--quiet", "--listen", ":" + taken.getLocalPort(), "--",
                     workload.sourceBuildTool("llama-bench").toString(), "-m", tinyModel.toString())) {
            assertEquals(2, infertop.waitFor(60));
            assertEquals(List.of("infertop: --listen :" + taken.getLocalPort() + ": port " + taken.getLocalPort()
                    + " is already taken (ss -ltnp shows by whom): choose another port"), infertop.stderr);
            assertEquals(List.of(), infertop.stdout);
        }
        LeakCheck.assertNothingLeft();
    }

    /**
     * A client that sent "G" and stalls, and one that announced a 100-byte body and sent none (both renewed every
     * half second: infertop closes each at its 2 s head deadline), beside a real Prometheus scraping every second
     * with a 1 s timeout: every scrape of the 10 s window succeeded ({@code up} is 1 at each, none took 1 s). With
     * the JDK's server the first "G" held its only thread, and every scrape after it timed out.
     */
    @Test
    void aStalledClientFailsNoScrape(@TempDir Path directory) throws Exception {
        int infertopPort = freePort();
        int prometheusPort = freePort();
        Process prometheus = null;
        Throwable primary = null;
        List<Socket> stalled = new ArrayList<>();
        try (InfertopProcess infertop = InfertopProcess.start("--quiet", "--listen", "127.0.0.1:" + infertopPort,
                "--follow", "infertop-none")) {
            infertop.awaitStderr("serving metrics at http://127.0.0.1:" + infertopPort + "/metrics", 30);
            prometheus = startPrometheus(directory, prometheusPort, infertopPort);
            awaitQuery(prometheusPort, "up{job=\"infertop\"} == 1", 30);

            long windowSeconds = 10;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(windowSeconds);
            while (System.nanoTime() < end) {
                stalled.add(stall(infertopPort, "G"));
                stalled.add(stall(infertopPort, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"));
                Thread.sleep(500);
            }
            String window = "[" + windowSeconds + "s]";
            double scrapes = queryValue(prometheusPort, "count_over_time(up{job=\"infertop\"}" + window + ")");
            double worstUp = queryValue(prometheusPort, "min_over_time(up{job=\"infertop\"}" + window + ")");
            double slowestSeconds = queryValue(prometheusPort,
                    "max_over_time(scrape_duration_seconds{job=\"infertop\"}" + window + ")");
            System.out.printf("PrometheusIT: %d stalled clients over %d s; %.0f scrapes, min up %.0f, slowest %.4f s%n",
                    stalled.size(), windowSeconds, scrapes, worstUp, slowestSeconds);
            assertTrue(scrapes >= windowSeconds - 2, scrapes + " scrapes in " + windowSeconds + " s");
            assertEquals(1, worstUp, "a scrape failed beside the stalled clients");
            assertTrue(slowestSeconds < 1, "slowest scrape " + slowestSeconds + " s");
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            infertop.waitFor(30); // with clients still connected: the exporter keeps nothing alive
        } catch (Throwable failure) {
            primary = failure;
            throw failure;
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
            stop(prometheus);
            assertNothingLeft(primary);
        }
    }

    /**
     * --web-config with TLS (a certificate and key made by openssl req, as a user would) and basic auth (a
     * bcrypt hash): a real Prometheus scraping over https, checking the certificate against it as its CA, with
     * the right password gets {@code up} 1; with a wrong one {@code up} 0, and infertop's 401 is the target's
     * last error.
     */
    @Test
    void prometheusScrapesOverTlsWithBasicAuth(@TempDir Path directory) throws Exception {
        Requirements.require(Files.isExecutable(OPENSSL), "needs openssl (apt-get install -y openssl)");
        Path cert = directory.resolve("cert.pem");
        Path key = directory.resolve("key.pem");
        Process openssl = new ProcessBuilder(OPENSSL.toString(), "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-keyout", key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1").redirectErrorStream(true).start();
        String opensslSaid = new String(openssl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(openssl.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, openssl.exitValue(), opensslSaid);
        Path webConfig = directory.resolve("web.yml");
        Files.writeString(webConfig, """
                tls_server_config:
                  cert_file: cert.pem
                  key_file: key.pem
                basic_auth_users:
                  prometheus: %s
                """.formatted(BCrypt.withDefaults().hashToString(10, "s3cret".toCharArray())));

        int infertopPort = freePort();
        int prometheusPort = freePort();
        Process prometheus = null;
        Throwable primary = null;
        try (InfertopProcess infertop = InfertopProcess.start("--quiet", "--listen", "127.0.0.1:" + infertopPort,
                "--web-config", webConfig.toString(), "--follow", "infertop-none")) {
            infertop.awaitStderr("serving metrics at https://127.0.0.1:" + infertopPort + "/metrics", 30);
            String job = """
                  - job_name: %s
                    scheme: https
                    tls_config:
                      ca_file: %s
                    basic_auth:
                      username: prometheus
                      password: %s
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """;
            prometheus = startPrometheus(directory, prometheusPort, job.formatted("right", cert, "s3cret", infertopPort)
                    + job.formatted("wrong", cert, "guess", infertopPort));
            for (String name : List.of("right", "wrong")) {
                awaitQuery(prometheusPort, "count_over_time(up{job=\"" + name + "\"}[1m]) >= 3", 30);
            }
            double right = queryValue(prometheusPort, "min_over_time(up{job=\"right\"}[1m])");
            double wrong = queryValue(prometheusPort, "max_over_time(up{job=\"wrong\"}[1m])");
            String wrongError = targetError(prometheusPort, "wrong");
            System.out.printf("PrometheusIT: https with basic auth: up %.0f with the password, %.0f with a wrong one "
                    + "(%s)%n", right, wrong, wrongError);
            assertEquals(1, right, "every scrape with the right password: " + targetError(prometheusPort, "right"));
            assertEquals(0, wrong);
            assertTrue(wrongError.contains("401"), wrongError);
        } catch (Throwable failure) {
            primary = failure;
            throw failure;
        } finally {
            stop(prometheus);
            assertNothingLeft(primary);
        }
    }

    /**
     * 16 clients sending wrong passwords (bcrypt cost 10), each a new one 10 ms after its answer, beside a real
     * Prometheus scraping every second (1 s timeout) with the right one, all from 127.0.0.1: every scrape of the
     * 20 s window succeeds ({@code up} 1 at each), the 16 got a handful of bcrypt checks in all (each 401 they are
     * told is one; the rest are 429, their address having failed lately, or 503, and cost none), infertop's
     * bcrypt thread used a small share of the window, and it has no more threads than before. Before, each wrong
     * password held one of the 16 connections as being answered while it queued for the one check at a time:
     * scrapes that found them all so were closed at once, and a core stayed in bcrypt beside the workload.
     */
    @Test
    void wrongPasswordClientsFailNoScrape(@TempDir Path directory) throws Exception {
        Path webConfig = directory.resolve("web.yml");
        Files.writeString(webConfig, "basic_auth_users:\n  prometheus: "
                + BCrypt.withDefaults().hashToString(10, "s3cret".toCharArray()) + "\n");
        int infertopPort = freePort();
        int prometheusPort = freePort();
        long windowSeconds = 20;
        Process prometheus = null;
        Throwable primary = null;
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> guessers = new ArrayList<>();
        Map<String, LongAdder> answers = new ConcurrentHashMap<>();
        try (InfertopProcess infertop = InfertopProcess.start("--quiet", "--listen", "127.0.0.1:" + infertopPort,
                "--web-config", webConfig.toString(), "--follow", "infertop-none")) {
            infertop.awaitStderr("serving metrics at http://127.0.0.1:" + infertopPort + "/metrics", 30);
            prometheus = startPrometheus(directory, prometheusPort, """
                      - job_name: infertop
                        basic_auth:
                          username: prometheus
                          password: s3cret
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                    """.formatted(infertopPort));
            awaitQuery(prometheusPort, "up{job=\"infertop\"} == 1", 30); // its password passed, once
            long pid = infertop.process.pid();
            int threadsBefore = threads(pid);
            long processTicksBefore = cpuTicks(Path.of("/proc/" + pid + "/stat"));
            long bcryptTicksBefore = bcryptTicks(pid);

            for (int i = 0; i < 16; i++) {
                int guesser = i;
                guessers.add(Thread.ofPlatform().daemon().name("guesser-" + i).start(() -> {
                    for (int attempt = 0; !stop.get(); attempt++) {
                        byte[] guess = ("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic "
                                + Base64.getEncoder().encodeToString(("prometheus:guess" + guesser + "-" + attempt)
                                .getBytes(StandardCharsets.UTF_8)) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                        answers.computeIfAbsent(ask(infertopPort, guess), key -> new LongAdder()).increment();
                        try {
                            Thread.sleep(10);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }));
            }
            Thread.sleep(TimeUnit.SECONDS.toMillis(windowSeconds));
            stop.set(true);
            for (Thread guesser : guessers) {
                guesser.join(TimeUnit.SECONDS.toMillis(30));
            }
            double processSeconds = (cpuTicks(Path.of("/proc/" + pid + "/stat")) - processTicksBefore) / 100.0;
            double bcryptSeconds = (bcryptTicks(pid) - bcryptTicksBefore) / 100.0;
            int threadsAfter = threads(pid);

            String window = "[" + windowSeconds + "s]";
            double scrapes = queryValue(prometheusPort, "count_over_time(up{job=\"infertop\"}" + window + ")");
            double worstUp = queryValue(prometheusPort, "min_over_time(up{job=\"infertop\"}" + window + ")");
            Map<String, Long> counts = new TreeMap<>();
            answers.forEach((status, count) -> counts.put(status, count.sum()));
            System.out.printf("PrometheusIT: 16 wrong-password clients over %d s: %.0f scrapes, min up %.0f (%s); the "
                            + "clients' answers %s; infertop's CPU %.2f s, in its bcrypt thread %.2f s; threads %d "
                            + "before, %d after%n", windowSeconds, scrapes, worstUp,
                    targetError(prometheusPort, "infertop"), counts, processSeconds, bcryptSeconds, threadsBefore,
                    threadsAfter);
            assertEquals(1, worstUp, "a scrape failed beside the wrong passwords: " + targetError(prometheusPort,
                    "infertop"));
            assertTrue(scrapes >= windowSeconds - 2, scrapes + " scrapes in " + windowSeconds + " s");
            // One address: two checks at once (its free failure and the one counted as it starts), then one at 1, 3,
            // 7, 15 s of the back-off (1 s doubling to 30 s): 6 in 20 s; 10 allows for a window that ran long.
            assertTrue(counts.getOrDefault("401", 0L) <= 10, "bcrypt checks for the wrong passwords: " + counts);
            assertTrue(bcryptSeconds <= 0.25 * windowSeconds, bcryptSeconds + " s in bcrypt over " + windowSeconds + " s");
            assertTrue(threadsAfter <= threadsBefore + 8, threadsBefore + " threads before, " + threadsAfter + " after");
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            infertop.waitFor(30);
        } catch (Throwable failure) {
            primary = failure;
            throw failure;
        } finally {
            stop.set(true);
            for (Thread guesser : guessers) {
                guesser.join(TimeUnit.SECONDS.toMillis(30));
            }
            stop(prometheus);
            assertNothingLeft(primary);
        }
    }

    /** Sends {@code request} on a new connection: the status of the answer, or "closed" (none within 10 s). */
    private static String ask(int port, byte[] request) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request);
            byte[] answer = socket.getInputStream().readAllBytes();
            return answer.length >= 12 ? new String(answer, 9, 3, StandardCharsets.US_ASCII) : "closed";
        } catch (IOException e) {
            return "closed";
        }
    }

    /** utime + stime of a /proc stat file, in clock ticks (USER_HZ, 100 on Linux). */
    private static long cpuTicks(Path stat) throws IOException {
        String text = Files.readString(stat);
        String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // fields 14 and 15 of proc_pid_stat(5)
    }

    /** The CPU ticks of infertop's bcrypt thread ({@code infertop-bcrypt}), 0 while it has none. */
    private static long bcryptTicks(long pid) throws IOException {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    if (Files.readString(task.resolve("comm")).strip().equals("infertop-bcrypt")) {
                        ticks += cpuTicks(task.resolve("stat"));
                    }
                } catch (IOException gone) {
                    // a thread that ended meanwhile
                }
            }
        }
        return ticks;
    }

    private static int threads(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring("Threads:".length()).strip());
            }
        }
        throw new AssertionError("no Threads: line in /proc/" + pid + "/status");
    }

    private static Socket stall(int port, String bytes) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.getOutputStream().write(bytes.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    private static void stop(Process prometheus) throws InterruptedException {
        if (prometheus != null) {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly();
            }
        }
    }

    /** Waits until {@code promql} gives a series. */
    private void awaitQuery(int port, String promql, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (query(port, promql).size() > 0) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError(promql + " gave nothing within " + timeoutSeconds + " s");
    }

    /** The last scrape error of job {@code job}'s target (/api/v1/targets), "" when its last scrape succeeded. */
    private String targetError(int port, String job) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/api/v1/targets")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        for (JsonNode target : JSON.readTree(response.body()).get("data").get("activeTargets")) {
            if (target.get("labels").get("job").asText().equals(job)) {
                return target.get("lastError").asText();
            }
        }
        throw new AssertionError("no target of job " + job + ": " + response.body());
    }

    /**
     * Every query of config/grafana-dashboard.json (its variables filled in as Grafana would) runs on this
     * Prometheus, and each panel's first query has data: the example dashboard works on what infertop serves.
     */
    private void assertDashboardQueriesAnswer(int port) throws Exception {
        JsonNode dashboard = JSON.readTree(Path.of("config/grafana-dashboard.json").toFile());
        for (JsonNode panel : dashboard.get("panels")) {
            JsonNode targets = panel.get("targets");
            for (int i = 0; i < targets.size(); i++) {
                String expr = targets.get(i).get("expr").asText().replace("$job", ".*").replace("$instance", ".*")
                        .replace("$__rate_interval", "10s");
                JsonNode result = query(port, expr);
                if (i == 0) {
                    assertTrue(result.size() > 0, panel.get("title").asText() + ": " + expr + " has no data");
                }
            }
        }
    }

    /** The leak check, without hiding the failure that ended the test (it is then added to that one). */
    private static void assertNothingLeft(Throwable primary) throws Exception {
        try {
            LeakCheck.assertNothingLeft();
        } catch (AssertionError leak) {
            if (primary == null) {
                throw leak;
            }
            primary.addSuppressed(leak);
        }
    }

    private static Process startPrometheus(Path directory, int port, int infertopPort) throws Exception {
        return startPrometheus(directory, port, """
                  - job_name: infertop
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(infertopPort));
    }

    /** Prometheus scraping every second (1 s timeout) with {@code scrapeConfigs} (the list, indented by 2). */
    private static Process startPrometheus(Path directory, int port, String scrapeConfigs) throws Exception {
        Path config = directory.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                """ + scrapeConfigs);
        Process process = new ProcessBuilder(PROMETHEUS.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + directory.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(directory.resolve("prometheus.log").toFile()).start();
        Path log = directory.resolve("prometheus.log");
        if (HttpReady.await("http://127.0.0.1:" + port + "/-/ready", process, 30, () -> readQuietly(log))) {
            return process;
        }
        process.destroyForcibly();
        throw new AssertionError("prometheus not ready within 30 s:\n"
                + Files.readString(directory.resolve("prometheus.log")));
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** The instant vector of {@code promql} (data.result). */
    private JsonNode query(int port, String promql) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), promql + ": " + response.body());
        JsonNode body = JSON.readTree(response.body());
        assertEquals("success", body.get("status").asText(), response.body());
        return body.get("data").get("result");
    }

    /** The value of a query that gives one series. */
    private double queryValue(int port, String promql) throws Exception {
        JsonNode result = query(port, promql);
        assertEquals(1, result.size(), promql + " gives " + result);
        return Double.parseDouble(result.get(0).get("value").get(1).asText());
    }

    /** Waits until infertop's last {@code count} JSON intervals decoded nothing (the target is stopped). */
    private static void awaitIdleIntervals(InfertopProcess infertop, int count, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            List<JsonNode> lines = infertop.jsonLines();
            if (lines.size() >= count && lines.subList(lines.size() - count, lines.size()).stream()
                    .allMatch(l -> l.get("decode_calls").asLong() == 0)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("llama-bench still decoding " + timeoutSeconds + " s after SIGSTOP");
    }

    /** Waits until Prometheus holds a sample of infertop's metrics scraped after {@code epochSeconds}. */
    private void awaitScrapedAfter(int port, double epochSeconds, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (queryValue(port, "timestamp(infertop_decode_tokens_total)") >= epochSeconds) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("Prometheus scraped nothing new within " + timeoutSeconds + " s");
    }

    /**
     * The TPOT buckets' span holding {@code seconds}: (lower edge, upper edge], widened to the neighbouring
     * bucket when {@code seconds} is within HdrHistogram's precision (0.1 %) of an edge, where it may be counted
     * on either side.
     */
    private static double[] bucketAround(double seconds) {
        return new double[] {edgesAround(seconds * 0.999)[0], edgesAround(seconds * 1.001)[1]};
    }

    private static double[] edgesAround(double seconds) {
        double lower = 0;
        for (long edge : LatencyBuckets.TPOT_EDGES_NS) {
            if (seconds <= edge / 1e9) {
                return new double[] {lower, edge / 1e9};
            }
            lower = edge / 1e9;
        }
        return new double[] {lower, Double.POSITIVE_INFINITY};
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
