package dev.infertop.it;

import dev.infertop.export.ChromeTraceWriter;
import dev.infertop.model.MoeTotals;
import dev.infertop.snapshot.SnapshotDirectory;
import dev.infertop.snapshot.SummarySnapshot;
import dev.infertop.workload.SyntheticModel;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.export.ChromeTraceValidator;
import dev.infertop.model.Percentiles;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots of a real traced llama-bench, read back with other tools: the trace against the Chrome Trace Event
 * format with op slices for every traced thread, the hlog with HdrHistogram's own reader to the summary's
 * percentiles, report.html rendered by headless Chromium to a PNG whose plots hold data pixels,
 * {@code infertop report --json} against the summary, SIGUSR1 while tracing, replay in a real terminal (tmux)
 * showing the summary's numbers, and a truncated file refused with one line naming it.
 */
class SnapshotIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path bench;
    private static Path tinyModel;

    @TempDir
    Path temp;

    @BeforeAll
    static void requirements() {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
    }

    /** llama-bench on the tiny model: pp32 and tg16, 2 repetitions each plus warm-ups, 2 threads. */
    private List<String> benchCommand(int repetitions) {
        return List.of(bench.toString(), "-m", tinyModel.toString(), "-p", "32", "-n", "16", "-r",
                Integer.toString(repetitions), "-t", "2");
    }

    /**
     * A run with --snapshot-on-exit and --dag, started from a shell with umask 022 (which would make them 0755 and
     * 0644): the snapshot directory is 0700 and its files and the DAG file 0600, since they name the model,
     * prompt lengths and processes.
     */
    private Path snapshotOnExit() throws Exception {
        Path dag = temp.resolve("dag.dot");
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--snapshot-on-exit", "--snapshot-dir",
                temp.resolve("snap-%p").toString(), "--dag", dag.toString(), "--"));
        args.addAll(benchCommand(2));
        try (InfertopProcess infertop = InfertopProcess.startWithUmask("022", args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            String written = infertop.stderr.stream().filter(l -> l.contains("snapshot (exit) written to "))
                    .findFirst().orElseThrow(() -> new AssertionError("no snapshot notice:\n" + infertop.stderrText()));
            Path dir = Path.of(written.substring(written.indexOf("written to ") + 11));
            assertEquals(temp.resolve("snap-" + total.path("pid").asInt()), dir);
            ObjectNode summary = (ObjectNode) JSON.readTree(dir.resolve("summary.json").toFile());
            summary.remove("snapshot");
            assertEquals(total, summary, "summary.json holds the --json output's final object");
            assertEquals("rwx------", mode(dir));
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    assertEquals("rw-------", mode(file), file.toString());
                }
            }
            assertEquals("rw-------", mode(dag));
            return dir;
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    private static String mode(Path path) throws IOException {
        return java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(path,
                java.nio.file.LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void snapshotOfARealRunReadsBackWithOtherTools() throws Exception {
        Path dir = snapshotOnExit();
        JsonNode summary = JSON.readTree(dir.resolve("summary.json").toFile());
        // pp32: a warm-up and 2 repetitions of 32 tokens; tg16: a 1-token warm-up and 2 x 16 (see LlamaBenchRun)
        LlamaBenchRun bench = new LlamaBenchRun(32, 16, 2);
        assertEquals(bench.promptTokensCounted(), summary.path("tokens_prefill").asLong());
        assertEquals(bench.generatedTokensCounted(), summary.path("tokens_decode").asLong());
        assertTraceHasSlicesForEveryThread(dir, summary, false);
        assertHlogGivesTheSummarysPercentiles(dir, summary);
        assertReportRendersWithPlots(dir);
        assertReportCommandMatchesTheSummary(dir, summary);
        assertTruncatedFileIsRefused(dir);
        assertReplayShowsTheSummary(dir, summary);
        assertDagOfTheLastDecodeGraph(dir, summary);
    }

    /** The operator layer traced decode graphs: the snapshot has the last one's DAG, listed in the summary. */
    private static void assertDagOfTheLastDecodeGraph(Path dir, JsonNode summary) throws IOException {
        Path dot = dir.resolve("operator-dag.dot");
        assertTrue(Files.isRegularFile(dot), "operator-dag.dot in " + dir);
        String text = Files.readString(dot);
        assertTrue(text.startsWith("digraph"), text.substring(0, Math.min(80, text.length())));
        assertTrue(text.contains("MUL_MAT"), "the decode graph's matmuls are nodes");
        assertTrue(summary.path("snapshot").path("files").toString().contains("operator-dag.dot"),
                summary.path("snapshot").path("files").toString());
    }

    /**
     * @param targetAlive the snapshot was taken while the target ran: its threads' names (comm) could be read.
     *                    (At exit, a run shorter than one interval has its threads named by number.)
     */
    private static void assertTraceHasSlicesForEveryThread(Path dir, JsonNode summary, boolean targetAlive)
            throws IOException {
        JsonNode trace = JSON.readTree(dir.resolve("trace.json").toFile());
        assertEquals(List.of(), ChromeTraceValidator.problems(trace));
        Map<Integer, Integer> opSlicesByTid = new HashMap<>();
        Set<String> categories = new HashSet<>();
        Set<String> counters = new HashSet<>();
        int mulMatsWithFlops = 0;
        Map<Integer, String> threadNames = new HashMap<>();
        for (JsonNode event : trace.path("traceEvents")) {
            if (event.path("name").asText().equals("thread_name")) {
                threadNames.put(event.path("tid").asInt(), event.path("args").path("name").asText());
            }
            categories.add(event.path("cat").asText());
            if (event.path("ph").asText().equals("C")) {
                counters.add(event.path("name").asText());
            }
            if (event.path("cat").asText().equals("op")) {
                opSlicesByTid.merge(event.path("tid").asInt(), 1, Integer::sum);
                if (event.path("name").asText().equals("MUL_MAT") && event.path("args").path("flops_est").asLong() > 0) {
                    mulMatsWithFlops++;
                }
            }
        }
        assertTrue(categories.containsAll(Set.of("token", "graph", "op", "wait")), categories.toString());
        assertTrue(counters.contains("tokens/s"), counters.toString());
        assertTrue(mulMatsWithFlops > 0, "MUL_MAT slices carry estimated FLOPs (K from their src1 node)");
        List<Integer> threads = new ArrayList<>();
        summary.path("threads").fieldNames().forEachRemaining(tid -> threads.add(Integer.parseInt(tid)));
        assertEquals(2, threads.size(), "llama-bench -t 2: " + threads);
        for (int tid : threads) {
            assertTrue(opSlicesByTid.getOrDefault(tid, 0) > 100, "op slices of thread " + tid + ": " + opSlicesByTid);
        }
        assertEquals(Set.copyOf(threads), opSlicesByTid.keySet(), "op slices only on traced threads");
        for (int tid : threads) {
            // At exit a thread is named where a tick listed it while it lived (on a loaded machine the short run
            // lasts long enough), else by its number; never by another name.
            String name = threadNames.get(tid);
            if (targetAlive || !("thread " + tid).equals(name)) {
                assertEquals("llama-bench " + tid, name, "thread names");
            }
        }
    }

    private static Map<String, Histogram> readHlog(Path file) throws IOException {
        Map<String, Histogram> totals = new HashMap<>();
        try (InputStream in = Files.newInputStream(file)) {
            HistogramLogReader reader = new HistogramLogReader(in);
            EncodableHistogram next;
            while ((next = reader.nextIntervalHistogram()) != null) {
                Histogram histogram = (Histogram) next;
                totals.merge(histogram.getTag(), histogram, (a, b) -> {
                    a.add(b);
                    return a;
                });
            }
        }
        return totals;
    }

    private static double ms(long ns) {
        return Math.round(ns / 1e6 * 1e4) / 1e4;
    }

    private static void assertHlogGivesTheSummarysPercentiles(Path dir, JsonNode summary) throws IOException {
        Map<String, Histogram> totals = readHlog(dir.resolve("latency.hlog"));
        for (String tag : List.of("ttft", "tpot")) {
            JsonNode expected = summary.path(tag + "_ms");
            Histogram histogram = totals.get(tag);
            assertEquals(expected.path("count").asLong(), histogram.getTotalCount(), tag);
            long[] ns = Percentiles.valuesAt(histogram, 50, 90, 99);
            assertEquals(expected.path("p50").asDouble(), ms(ns[0]), tag + " p50");
            assertEquals(expected.path("p90").asDouble(), ms(ns[1]), tag + " p90");
            assertEquals(expected.path("p99").asDouble(), ms(ns[2]), tag + " p99");
            assertEquals(expected.path("max").asDouble(), ms(histogram.getMaxValue()), tag + " max");
        }
        int ops = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = summary.path("ops").fields(); it.hasNext(); ops++) {
            Map.Entry<String, JsonNode> op = it.next();
            Histogram histogram = totals.get("op:" + op.getKey());
            assertEquals(op.getValue().path("groups").asLong(), histogram.getTotalCount(), op.getKey());
            long[] ns = Percentiles.valuesAt(histogram, 50, 90, 99);
            assertEquals(op.getValue().path("p50_ms").asDouble(), ms(ns[0]), op.getKey() + " p50");
            assertEquals(op.getValue().path("p90_ms").asDouble(), ms(ns[1]), op.getKey() + " p90");
            assertEquals(op.getValue().path("p99_ms").asDouble(), ms(ns[2]), op.getKey() + " p99");
            assertEquals(op.getValue().path("max_ms").asDouble(), ms(histogram.getMaxValue()), op.getKey() + " max");
        }
        assertTrue(ops >= 5, "op types in the summary: " + ops);
    }

    /** The plots' series colours (HtmlReportWriter.COLORS): saturated, unlike text, axes and background. */
    private static final int[][] SERIES_RGB = {{0xd6, 0x27, 0x28}, {0x1f, 0x77, 0xb4}, {0x2c, 0xa0, 0x2c},
            {0xff, 0x7f, 0x0e}};

    private void assertReportRendersWithPlots(Path dir) throws Exception {
        Path chromium = Path.of("/usr/bin/chromium");
        Requirements.require(Files.isExecutable(chromium), "needs chromium (apt-get install -y chromium) to render "
                + "report.html");
        Path png = temp.resolve("report.png");
        Process process = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--hide-scrollbars", "--window-size=1200,1100", "--screenshot=" + png,
                dir.resolve("report.html").toUri().toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(process.waitFor(90, TimeUnit.SECONDS), "chromium rendered within 90 s");
        BufferedImage image = ImageIO.read(png.toFile());
        int[] pixelsPerSeries = new int[SERIES_RGB.length];
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
                for (int s = 0; s < SERIES_RGB.length; s++) {
                    if (Math.abs(r - SERIES_RGB[s][0]) + Math.abs(g - SERIES_RGB[s][1])
                            + Math.abs(b - SERIES_RGB[s][2]) < 40) {
                        pixelsPerSeries[s]++;
                    }
                }
            }
        }
        // A legend square is 100 pixels per plot. Red is the first line of the 3 line plots (the top op, TTFT),
        // blue the second line and the thread bars' work, orange the bars' barrier wait: far more than legends.
        // Green, the third line of the op plots, beyond its two legend squares (the log axes keep it apart).
        String counts = "pixels per colour (red, blue, green, orange): " + java.util.Arrays.toString(pixelsPerSeries);
        System.out.println("report.png " + image.getWidth() + "x" + image.getHeight() + " " + counts);
        assertTrue(pixelsPerSeries[0] > 600, counts);
        assertTrue(pixelsPerSeries[1] > 5000, counts);
        assertTrue(pixelsPerSeries[3] > 600, counts);
        assertTrue(pixelsPerSeries[2] > 300, counts);
    }

    private static void assertReportCommandMatchesTheSummary(Path dir, JsonNode summary) throws Exception {
        try (InfertopProcess report = InfertopProcess.start("report", dir.toString(), "--json")) {
            assertEquals(0, report.waitFor(60), report.stderrText());
            JsonNode json = report.jsonLines().getFirst();
            JsonNode tokens = json.path("tokens");
            assertEquals(summary.path("tokens_decode").asLong(), tokens.path("tokens_decode").asLong());
            assertEquals(summary.path("tokens_prefill").asLong(), tokens.path("tokens_prefill").asLong());
            assertEquals(summary.path("decode_tokens_per_s").asDouble(), tokens.path("decode_tokens_per_s").asDouble());
            for (String field : List.of("count", "p50", "p90", "p99", "max", "mean")) {
                assertEquals(summary.path("tpot_ms").path(field).asDouble(),
                        tokens.path("tpot_ms").path(field).asDouble(), "tpot " + field);
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = summary.path("ops").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> op = it.next();
                for (String field : List.of("groups", "wall_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")) {
                    assertEquals(op.getValue().path(field).asDouble(),
                            json.path("ops").path(op.getKey()).path(field).asDouble(), op.getKey() + " " + field);
                }
            }
        }
        try (InfertopProcess report = InfertopProcess.start("report", dir.toString())) {
            assertEquals(0, report.waitFor(60), report.stderrText());
            String text = String.join("\n", report.stdout);
            assertTrue(text.contains("Across tokens") && text.contains("Per op type") && text.contains("MUL_MAT"),
                    text);
        }
    }

    private void assertTruncatedFileIsRefused(Path dir) throws Exception {
        Path copy = Files.createDirectory(temp.resolve("truncated"));
        try (var files = Files.list(dir)) {
            for (Path file : files.toList()) {
                Files.copy(file, copy.resolve(file.getFileName()));
            }
        }
        Path trace = copy.resolve("trace.json");
        byte[] bytes = Files.readAllBytes(trace);
        Files.write(trace, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        try (InfertopProcess report = InfertopProcess.start("report", copy.toString())) {
            assertEquals(1, report.waitFor(60));
            assertEquals(1, report.stderr.size(), report.stderrText());
            assertTrue(report.stderrText().startsWith("infertop: " + trace + ": truncated or not JSON"),
                    report.stderrText());
            assertTrue(report.stdout.isEmpty(), "nothing printed for a refused snapshot");
        }
    }

    private void assertReplayShowsTheSummary(Path dir, JsonNode summary) throws Exception {
        try (TmuxPane pane = TmuxPane.start("infertop-snap-" + ProcessHandle.current().pid(), 100, 30,
                "replay", dir.toString())) {
            String decode = String.format(Locale.ROOT, "%10.1f tok/s", summary.path("decode_tokens_per_s").asDouble());
            // Not awaited: the assertions below say what of the summary is missing from the last screen.
            String screen = pane.pollScreen(s -> s.contains("replay") && s.contains("MUL_MAT"), 60);
            assertTrue(screen.contains("pid " + summary.path("pid").asInt() + " llama-bench"), screen);
            assertTrue(screen.contains("decode  " + decode), "decode speed " + decode + ":\n" + screen);
            String tpot = String.format(Locale.ROOT, "TPOT p50 %.3f", summary.path("tpot_ms").path("p50").asDouble());
            assertTrue(screen.contains(tpot), tpot + ":\n" + screen);
            pane.keys("q");
            screen = pane.pollScreen(s -> s.contains("EXITED-"), 20);
            assertTrue(screen.contains("EXITED-0"), screen);
        }
    }

    /**
     * With the sched and counters layers on, the trace holds each traced thread's states (on its states track)
     * and a counter track per software event, and the report and replay carry both layers' figures.
     */
    @Test
    void deepLayersReachTheTraceAndTheReport() throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--layers",
                "token,graph,operator,sched,counters", "--counters", "software", "--snapshot-on-exit",
                "--snapshot-dir", temp.resolve("deep").toString(), "--"));
        args.addAll(benchCommand(2));
        Path dir = temp.resolve("deep");
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), infertop.stderrText());
        } finally {
            LeakCheck.assertNothingLeft();
        }
        JsonNode summary = JSON.readTree(dir.resolve("summary.json").toFile());
        JsonNode trace = JSON.readTree(dir.resolve("trace.json").toFile());
        assertEquals(List.of(), ChromeTraceValidator.problems(trace));
        Map<Integer, Set<String>> statesByTid = new HashMap<>();
        Set<String> counterTracks = new HashSet<>();
        int waits = 0;
        int namedWaits = 0;
        for (JsonNode event : trace.path("traceEvents")) {
            if (event.path("name").asText().equals("off-CPU (runnable)")) {
                waits++;
                namedWaits += event.path("args").has("interferer") ? 1 : 0;
            }
            if (event.path("cat").asText().equals("sched")) {
                statesByTid.computeIfAbsent(event.path("tid").asInt()
                        - ChromeTraceWriter.STATES_TID_OFFSET, t -> new HashSet<>())
                        .add(event.path("name").asText());
            }
            if (event.path("ph").asText().equals("C")) {
                counterTracks.add(event.path("name").asText());
            }
        }
        List<Integer> threads = new ArrayList<>();
        summary.path("threads").fieldNames().forEachRemaining(tid -> threads.add(Integer.parseInt(tid)));
        // A thread's running stretch is recorded when it leaves the CPU: a worker that spun through the whole
        // short run without being switched out has none, so at least one traced thread must have them.
        int withRunning = 0;
        for (int tid : threads) {
            Set<String> states = statesByTid.getOrDefault(tid, Set.of());
            System.out.println("SnapshotIT: thread " + tid + " states in the trace: " + states);
            withRunning += states.contains("running") ? 1 : 0;
            assertTrue(Set.of("running", "off-CPU (runnable)", "off-CPU (sleeping)").containsAll(states), states.toString());
        }
        assertTrue(withRunning > 0, "a traced thread has running slices: " + statesByTid);
        System.out.println("SnapshotIT: counter tracks " + counterTracks + "; " + namedWaits + " of " + waits
                + " waits for a CPU name an interferer (none when no other task ran meanwhile)");
        assertTrue(counterTracks.containsAll(Set.of("task-clock per s", "page-faults per s",
                "context-switches per s", "cpu-migrations per s")), counterTracks.toString());
        JsonNode r;
        try (InfertopProcess report = InfertopProcess.start("report", dir.toString(), "--json")) {
            assertEquals(0, report.waitFor(60), report.stderrText());
            r = report.jsonLines().getFirst();
        }
        assertTrue(r.path("sched").path("recorded").asBoolean(), r.toString());
        assertEquals(summary.path("sched").path("running_ns").asLong(), r.path("sched").path("running_ns").asLong());
        assertTrue(r.path("counters").path("recorded").asBoolean(), r.toString());
        assertEquals(summary.path("counters").path("ops").size(), r.path("counters").path("ops").size());
    }

    /**
     * The tiny MoE model with the moe layer on: every MUL_MAT_ID ids read is one "moe experts" instant on a traced
     * thread whose per-expert counts add up to its tokens × experts used, and (the window holding the whole run)
     * to summary.json's counts per layer and expert; report.html draws the heatmap cell by cell; {@code report
     * --json} gives the summary's counts and CVs; replay rebuilds the summary's counts.
     */
    @Test
    void moeExpertActivationsReachTheTraceTheReportAndReplay() throws Exception {
        Path moeModel = Models.preset("tiny-moe");
        Path dir = temp.resolve("moe");
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--layers", "token,graph,operator,moe",
                "--flight-seconds", "300", "--snapshot-on-exit", "--snapshot-dir", dir.toString(), "--",
                bench.toString(), "-m", moeModel.toString(), "-p", "32", "-n", "16", "-r", "1", "-t", "2"));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), infertop.stderrText());
        } finally {
            LeakCheck.assertNothingLeft();
        }
        JsonNode summary = JSON.readTree(dir.resolve("summary.json").toFile());
        JsonNode moe = summary.path("moe");
        assertTrue(moe.isObject(), "moe object in summary.json: " + summary);
        int experts = moe.path("experts").asInt();
        int layers = moe.path("layers").size();
        SyntheticModel spec = SyntheticModel.preset("tiny-moe");
        assertEquals(spec.expertCount(), experts, moe.toString());
        assertEquals(spec.layerCount(), layers, moe.toString());

        JsonNode trace = JSON.readTree(dir.resolve("trace.json").toFile());
        assertEquals(List.of(), ChromeTraceValidator.problems(trace));
        Set<String> threads = new HashSet<>();
        summary.path("threads").fieldNames().forEachRemaining(threads::add);
        long[][] traced = new long[layers][experts];
        long[] tracedTokens = new long[layers];
        int instants = 0;
        int decodeInstants = 0;
        for (JsonNode event : trace.path("traceEvents")) {
            if (!event.path("cat").asText().equals("moe")) {
                continue;
            }
            instants++;
            assertEquals("i", event.path("ph").asText(), event.toString());
            assertEquals("moe experts", event.path("name").asText(), event.toString());
            assertTrue(threads.contains(event.path("tid").asText()), "on a traced thread: " + event + " " + threads);
            JsonNode a = event.path("args");
            int layer = a.path("layer").asInt();
            long tokens = a.path("tokens").asLong();
            decodeInstants += tokens == 1 ? 1 : 0;
            assertTrue(a.path("counts_complete").asBoolean(), event.toString());
            long selections = 0;
            for (Iterator<Map.Entry<String, JsonNode>> it = a.path("counts").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> count = it.next();
                selections += count.getValue().asLong();
                traced[layer][Integer.parseInt(count.getKey())] += count.getValue().asLong();
            }
            assertEquals(tokens * a.path("experts_used").asInt(), selections, "every token's experts: " + event);
            tracedTokens[layer] += tokens;
        }
        boolean wholeRun = !trace.path("otherData").path("window_truncated").asBoolean();
        System.out.println("SnapshotIT: " + instants + " moe instants (" + decodeInstants + " decode), window "
                + (wholeRun ? "holds the run" : "truncated"));
        assertTrue(decodeInstants > 0 && instants > decodeInstants, "decode and prefill reads: " + instants);
        for (int l = 0; l < layers; l++) {
            JsonNode layer = moe.path("layers").path(Integer.toString(l));
            long tokens = layer.path("tokens_prefill").asLong() + layer.path("tokens_decode").asLong();
            assertTrue(wholeRun ? tracedTokens[l] == tokens : tracedTokens[l] <= tokens, "layer " + l + ": "
                    + tracedTokens[l] + " traced tokens, summary " + tokens);
            for (int e = 0; wholeRun && e < experts; e++) {
                assertEquals(layer.path("prefill").get(e).asLong() + layer.path("decode").get(e).asLong(),
                        traced[l][e], "layer " + l + " expert " + e);
            }
        }

        String html = Files.readString(dir.resolve("report.html"));
        int section = html.indexOf("<h2>Expert activations");
        String heatmap = html.substring(section, html.indexOf("</section>", section));
        assertTrue(heatmap.contains("data-phase=\"decode\"") && heatmap.contains("data-phase=\"prefill\""), heatmap);
        assertEquals(2 * layers * experts, heatmap.split("<title>layer ", -1).length - 1, "a cell per layer, expert, phase");
        long decode00 = moe.path("layers").path("0").path("decode").get(0).asLong();
        assertTrue(heatmap.contains("<title>layer 0 expert 0 decode: " + decode00 + " of "
                + moe.path("layers").path("0").path("tokens_decode").asLong() + " tokens"), heatmap);

        JsonNode r;
        try (InfertopProcess report = InfertopProcess.start("report", dir.toString(), "--json")) {
            assertEquals(0, report.waitFor(60), report.stderrText());
            r = report.jsonLines().getFirst();
        }
        JsonNode reported = r.path("experts");
        assertTrue(reported.path("recorded").asBoolean(), r.toString());
        assertEquals(moe.path("imbalance_cv"), reported.path("imbalance_cv"));
        for (int l = 0; l < layers; l++) {
            JsonNode layer = moe.path("layers").path(Integer.toString(l));
            JsonNode rl = reported.path("layers").path(Integer.toString(l));
            assertEquals(layer.path("cv"), rl.path("cv"), "layer " + l);
            for (int e = 0; e < experts; e++) {
                assertEquals(layer.path("prefill").get(e).asLong() + layer.path("decode").get(e).asLong(),
                        rl.path("counts").get(e).asLong(), "layer " + l + " expert " + e);
            }
        }
        MoeTotals replayed = SummarySnapshot
                .of(SnapshotDirectory.open(dir)).moe();
        for (int l = 0; l < layers; l++) {
            for (int e = 0; e < experts; e++) {
                assertEquals(moe.path("layers").path(Integer.toString(l)).path("decode").get(e).asLong(),
                        replayed.totalDecode()[l][e]);
            }
        }
    }

    @Test
    void sigusr1WritesASnapshotWhileTracing() throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--snapshot-dir",
                temp.resolve("usr1-%n").toString(), "--"));
        // prompt and generation in each repetition (-pg), so decode steps come within the first seconds
        args.addAll(List.of(bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32",
                "-r", "100000", "-t", "2"));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            // Decoded tokens, not the key alone (every line has it): on a loaded machine the first repetition's
            // prompt can take seconds.
            infertop.awaitJson("decoded tokens", line -> line.path("tokens_decode").asLong() > 0, 120);
            // And a window of the operator layer: the budget samples it, and on a loaded machine the first seconds
            // may hold none (the trace below has op slices only from a window).
            infertop.awaitJson("an interval with operator graphs", line -> line.path("op_graphs").asLong() > 0, 120);
            LlamaBenchIT.signal(infertop.process.pid(), "USR1");
            infertop.awaitStderr("snapshot (SIGUSR1) written to", 30);
            assertTrue(infertop.process.isAlive(), "tracing goes on after a snapshot");
            LlamaBenchIT.signal(infertop.process.pid(), "INT");
            infertop.waitFor(30);
            Path dir = temp.resolve("usr1-1");
            JsonNode summary = JSON.readTree(dir.resolve("summary.json").toFile());
            assertEquals("SIGUSR1", summary.path("snapshot").path("trigger").asText());
            assertTrue(summary.path("tokens_decode").asLong() > 0, summary.toString());
            assertTraceHasSlicesForEveryThread(dir, summary, true);
            assertFalse(Files.exists(temp.resolve("usr1-2")), "one signal, one snapshot");
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /**
     * The live view's s key: a snapshot at the next interval, said in the status line; with an unwritable
     * --snapshot-dir the status line says why and tracing goes on.
     */
    @Test
    void keyWritesASnapshotFromTheLiveViewAndAFailureIsAStatusLine() throws Exception {
        TmuxPane.require();
        for (String pattern : List.of(temp.resolve("key-%n").toString(), "/proc/infertop-snap")) {
            try (TmuxPane pane = TmuxPane.start("infertop-snapkey-" + ProcessHandle.current().pid(), 120, 30,
                    "--snapshot-dir", pattern, "--", bench.toString(), "-m", tinyModel.toString(), "-p", "0",
                    "-n", "0", "-pg", "32,32", "-r", "100000", "-t", "2")) {
                String screen = pane.awaitScreen("MUL_MAT rows", s -> s.contains("MUL_MAT"), 60);
                pane.keys("s");
                String expected = pattern.startsWith("/proc") ? "cannot write snapshot /proc/infertop-snap"
                        : "snapshot (key) written to " + temp.resolve("key-1");
                screen = pane.awaitScreen(expected, s -> s.contains(expected), 30);
                assertTrue(screen.contains("running"), "tracing goes on:\n" + screen);
                pane.keys("q");
                screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
                assertTrue(screen.contains("EXITED-0"), screen);
            } finally {
                LeakCheck.assertNothingLeft();
            }
        }
        JsonNode summary = JSON.readTree(temp.resolve("key-1/summary.json").toFile());
        assertEquals("key", summary.path("snapshot").path("trigger").asText());
        assertFalse(Files.exists(Path.of("/proc/infertop-snap")));
    }
}
