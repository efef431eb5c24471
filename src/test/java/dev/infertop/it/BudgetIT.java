package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The overhead budget on llama-bench decoding the 245 M-parameter model (2 threads).
 * <ol>
 *   <li>Sampling is sound, proven on one run traced in full ({@code --budget 0}, whose counts stay exact): the
 *       op shares and MUL_MAT's median from the graphs of 1 s windows every 4 s equal those of every graph,
 *       within {@link #SHARE_POINTS} percentage points and {@link #P50_RATIO}.</li>
 *   <li>A tiny budget makes the controller sample: the per-thread probes are attached only part of the time,
 *       fewer graphs are traced than computed, the same ops are seen. (Its shares are not compared with the
 *       other run's: with gaps of 30 s its windows fall at the start, where the first touch of each weight
 *       page slows MUL_MAT: 79 % against the run's 66 % seen here. Part 1 is the comparison that holds.)</li>
 * </ol>
 */
class BudgetIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Same run: an op's share of the time from the windows' graphs vs all graphs, in percentage points. What
     * else runs on the machine moves MUL_MAT's share (memory-bound: it shares the memory bus) by a few points
     * from second to second; seen here with a build running beside: 73.0 % over all graphs, 76.3 % in windows.
     */
    static final double SHARE_POINTS = 5;
    /** MUL_MAT's median from the windows vs all graphs: seen 137.7 vs 163.5 µs with a build running beside. */
    static final double P50_RATIO = 1.35;
    /**
     * CPU pressure (share of the run some task waited for a CPU) above which the medians are not compared: the run's
     * own threads (llama-bench's two and infertop's) on two cores wait a little; a busy loop per core beside them,
     * about half the time.
     */
    static final double MAX_PRESSURE = 0.25;
    /** MUL_MAT's share of decode at least (74-96 % seen here, by how busy the machine was). */
    static final double MIN_SHARE = 0.5;
    private static LlamaCppWorkload llama;

    @TempDir
    Path work;

    @BeforeAll
    static void requirements() {
        llama = Requirements.canTraceLlamaCpp();
    }

    @Test
    void windowsOfOneRunGiveTheSharesOfAllItsGraphsAndATinyBudgetSamples() throws Exception {
        Path model = Models.preset("bench");
        Path snapshots = work.resolve("full");
        CpuPressure pressure = CpuPressure.start();
        // 96 tokens a repetition: with 48 a run on a fast machine ended (about 2 s of decoding) before the
        // estimate's first reading, 2 s after the attach, and the budget had no figure to show.
        JsonNode full = trace(model, 96, "--budget", "0", "--flight-seconds", "300", "--snapshot-on-exit",
                "--snapshot-dir", snapshots.toString());
        // --budget 0: every graph traced, the counts exact.
        assertEquals("every graph", full.path("budget").path("sampling").asText(), full.path("budget").toString());
        assertEquals(1.0, full.path("budget").path("arrival_share").asDouble(), full.path("budget").toString());
        long computes = full.path("cpu_graph_computes").asLong();
        assertEquals(computes, full.path("op_graphs").asLong() + full.path("op_graphs_unattributed").asLong(),
                "every CPU graph traced: " + full);
        assertTrue(full.path("budget").path("full_tracing_percent").asDouble() > 0, full.path("budget").toString());

        // 1. The same run's graphs, all of them vs those starting in 1 s windows every 4 s.
        Path dir;
        try (Stream<Path> found = Files.list(snapshots.getParent())) {
            dir = found.filter(p -> p.getFileName().toString().startsWith("full")).findFirst().orElseThrow();
        }
        List<OpSlice> slices = opSlices(dir.resolve("trace.json"));
        long first = slices.stream().mapToLong(OpSlice::graphStartUs).min().orElseThrow();
        List<OpSlice> windows = slices.stream()
                .filter(s -> (s.graphStartUs() - first) % 4_000_000 < 1_000_000).toList();
        Map<String, Double> all = shares(slices);
        Map<String, Double> sampled = shares(windows);
        System.out.printf("budget: %d op slices in all, %d in windows; shares all %s, windows %s%n", slices.size(),
                windows.size(), all, sampled);
        assertTrue(windows.size() > slices.size() / 8, "the windows hold a quarter of the run: " + windows.size());
        assertSharesMatch(all, sampled, SHARE_POINTS, "same run");
        double p50All = p50Us(slices, "MUL_MAT");
        double p50Windows = p50Us(windows, "MUL_MAT");
        double waited = pressure.share();
        System.out.printf("budget: MUL_MAT p50 %.1f µs all, %.1f µs windows; CPU pressure %.0f %% of the run%n",
                p50All, p50Windows, 100 * waited);
        if (waited > MAX_PRESSURE) {
            // Other work took the cores now and then: a node's time is then bimodal (preempted or not) and its
            // median moves from second to second, whatever infertop does; measured above, not asserted.
            System.out.println("budget: the MUL_MAT medians are not compared: tasks waited for a CPU "
                    + Math.round(100 * waited) + " % of the run (other work on this machine)");
        } else {
            assertTrue(Math.max(p50All, p50Windows) / Math.min(p50All, p50Windows) <= P50_RATIO,
                    "MUL_MAT p50 " + p50All + " vs " + p50Windows + " (CPU pressure " + waited + ")");
        }

        // 2. A budget far below the full cost: the controller samples.
        CpuPressure tinyPressure = CpuPressure.start();
        JsonNode tiny = trace(model, 96, "--budget", "0.05");
        double tinyWaited = tinyPressure.share();
        JsonNode budget = tiny.path("budget");
        System.out.println("budget: tiny " + budget + "; op_graphs " + tiny.path("op_graphs").asLong() + " of "
                + tiny.path("cpu_graph_computes").asLong() + " (full run: " + full.path("budget") + ")");
        assertEquals(0.05, budget.path("limit_percent").asDouble(), budget.toString());
        assertTrue(budget.path("arrival_share").asDouble() < 1, "the per-thread probes went away: " + budget);
        // 0.05 % is below the rest's own cost: the windows are the shortest there are (BudgetPlan.MIN_ON_MS).
        assertEquals(0.25, budget.path("window_s").asDouble(), 1e-9, budget.toString());
        assertTrue(budget.path("sampling").asText().startsWith("0.25 s of every"), budget.toString());
        long traced = tiny.path("op_graphs").asLong();
        assertTrue(traced > 0, "the first window traced graphs: " + tiny);
        assertTrue(traced < tiny.path("cpu_graph_computes").asLong() * 3 / 4,
                "fewer graphs traced than computed: " + traced + " of " + tiny.path("cpu_graph_computes").asLong());
        long unattributed = tiny.path("op_graphs_unattributed").asLong();
        if (tinyWaited > MAX_PRESSURE) {
            // A thread preempted across a window's edge (other work holding the cores) leaves its graph half
            // seen: measured, not asserted, there.
            System.out.println("budget: unattributed graphs not bounded: tasks waited for a CPU "
                    + Math.round(100 * tinyWaited) + " % of the tiny budget's run; " + unattributed + " of " + traced);
        } else {
            assertTrue(unattributed <= Math.max(2, traced / 20), "windows end between graphs: " + unattributed
                    + " unattributed (CPU pressure " + tinyWaited + ")");
        }
        assertEquals(opsAbove(jsonShares(full), 0.0), opsAbove(jsonShares(tiny), 0.0), "the same ops, sampled or not");
    }

    /**
     * The operator layer switched on live (SIGUSR2, as the {@code 3} key) is sampled from its first window: the
     * budget's thread wakes at the switch for a first window as at the start (BudgetPlan.FIRST_ON_MS, 2 s), then
     * the budget's windows, instead of finishing its 5 s phase without the layer, during which every graph was
     * traced whatever the budget. The signal goes right after such a phase began (each phase ends with a line
     * under INFERTOP_DEBUG), where the old behaviour traced every graph for 4-5 s.
     */
    @Test
    void anOperatorLayerSwitchedOnLiveIsSampledFromItsFirstWindow() throws Exception {
        Path model = Models.preset("bench");
        // The test's own target, attached with -p: a failure here must not leave it decoding beside later tests.
        Process target = new ProcessBuilder(llama.sourceBuildTool("llama-bench").toString(), "-m", model.toString(),
                "-p", "0", "-n", "64", "-r", "1000", "-t", "2").redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (InfertopProcess infertop = InfertopProcess.start(Map.of("INFERTOP_DEBUG", "1"), "--json", "-d", "1",
                "--layers", "token,graph", "-p", Long.toString(target.pid()))) {
            long deadline = System.nanoTime() + 120_000_000_000L;
            // 20 graphs in all, not in one interval: a busy loop per core beside it slows the bench to a few a second.
            while (infertop.jsonLines().stream().mapToLong(line -> line.path("cpu_graph_computes").asLong()).sum() < 20
                    && System.nanoTime() < deadline) {
                Thread.sleep(100); // the model loads, then llama-bench decodes
            }
            deadline = System.nanoTime() + 30_000_000_000L; // a phase lasts 5 s
            long phasesBefore = budgetPhases(infertop);
            while (budgetPhases(infertop) == phasesBefore && System.nanoTime() < deadline) {
                Thread.sleep(20); // until a phase without the operator layer just began
            }
            assertTrue(budgetPhases(infertop) > phasesBefore, "no budget phase ended; stderr:\n" + infertop.stderrText());
            LlamaBenchIT.signal(infertop.process.pid(), "USR2");
            infertop.awaitStderr("operator layer on", 10);
            int switchedAt = infertop.jsonLines().size();
            deadline = System.nanoTime() + 30_000_000_000L;
            while (infertop.jsonLines().size() < switchedAt + SWITCH_INTERVALS && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            List<JsonNode> after = infertop.jsonLines().subList(switchedAt, switchedAt + SWITCH_INTERVALS);
            List<Long> opGraphs = after.stream().map(line -> line.path("op_graphs").asLong()).toList();
            double graphsPerS = after.stream().mapToLong(line -> line.path("cpu_graph_computes").asLong()).sum()
                    / after.stream().mapToDouble(line -> line.path("span_s").asDouble()).sum();
            double tracedS = opGraphs.stream().mapToLong(Long::longValue).sum() / graphsPerS;
            System.out.printf("budget: op_graphs per interval after the switch %s (%.1f graphs/s: %.2f s of graphs "
                    + "traced); %s%n", opGraphs, graphsPerS, tracedS, after.getLast().path("budget"));
            assertTrue(tracedS >= 0.5, "the first window filled the op table: " + opGraphs);
            assertTrue(tracedS <= 3, "every graph traced for " + tracedS + " s after the switch, more than the "
                    + "2 s first window: " + opGraphs + "; stderr:\n" + infertop.stderrText());
            assertTrue(after.getLast().path("budget").path("sampling").asText().contains(" of every "),
                    after.getLast().path("budget").toString());
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(143, infertop.waitFor(30), infertop.stderrText());
        } finally {
            target.destroyForcibly();
            target.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }

    private static long budgetPhases(InfertopProcess infertop) {
        synchronized (infertop.stderr) {
            return infertop.stderr.stream().filter(line -> line.startsWith("infertop budget:")).count();
        }
    }

    /** Intervals of 1 s looked at after the switch: a 5 s phase and the window after it fit in them. */
    private static final int SWITCH_INTERVALS = 8;

    private JsonNode trace(Path model, int tokens, String... options) throws Exception {
        // At most 150 intervals: on a quiet machine the bench ends long before; where a busy loop per core holds
        // the cores, ggml's two threads rarely run at once (each node ends at a barrier both must reach) and the
        // bench decoded a few tokens a second: the run ends there and is judged on what it decoded.
        List<String> args = new ArrayList<>(List.of("--json", "-d", "1", "-n", "150"));
        Collections.addAll(args, options);
        Collections.addAll(args, "--", llama.sourceBuildTool("llama-bench").toString(), "-m", model.toString(),
                "-p", "0", "-n", Integer.toString(tokens), "-r", "3", "-t", "2");
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(300), infertop.stderrText());
            LeakCheck.assertNothingLeft();
            return infertop.finalObject();
        }
    }

    /** Every op's share within {@code points}; the run's top op (MUL_MAT in decode) is one of them. */
    private static void assertSharesMatch(Map<String, Double> expected, Map<String, Double> actual, double points,
                                          String what) {
        for (String op : opsAbove(expected, 0.0)) {
            double share = expected.get(op);
            double other = actual.getOrDefault(op, 0.0);
            assertTrue(Math.abs(share - other) * 100 <= points, what + ": " + op + " "
                    + Math.round(share * 1000) / 10.0 + " % vs " + Math.round(other * 1000) / 10.0 + " %");
        }
        assertTrue(expected.getOrDefault("MUL_MAT", 0.0) >= MIN_SHARE, what + ": MUL_MAT leads decode: " + expected);
    }

    private static java.util.Set<String> opsAbove(Map<String, Double> shares, double min) {
        return new java.util.TreeSet<>(shares.entrySet().stream().filter(e -> e.getValue() > min || min == 0.0)
                .map(Map.Entry::getKey).toList());
    }

    /** Op name → share of the ops' wall time, from a final JSON object. */
    private static Map<String, Double> jsonShares(JsonNode total) {
        Map<String, Double> wall = new HashMap<>();
        total.path("ops").properties().forEach(e -> wall.put(e.getKey(), e.getValue().path("wall_ms").asDouble()));
        return normalised(wall);
    }

    record OpSlice(String op, double durUs, long graphStartUs) {}

    /** The trace's op slices, each with the start of the graph slice (same thread) it lies in. */
    private static List<OpSlice> opSlices(Path trace) throws IOException {
        JsonNode events = JSON.readTree(trace.toFile()).path("traceEvents");
        Map<Integer, List<long[]>> graphsByTid = new HashMap<>();
        for (JsonNode e : events) {
            if (e.path("cat").asText().equals("graph")) {
                graphsByTid.computeIfAbsent(e.path("tid").asInt(), t -> new ArrayList<>()).add(new long[]{
                        Math.round(e.path("ts").asDouble()), Math.round(e.path("ts").asDouble() + e.path("dur").asDouble())});
            }
        }
        List<long[]> graphs = graphsByTid.values().stream().flatMap(List::stream)
                .sorted((a, b) -> Long.compare(a[0], b[0])).toList();
        List<OpSlice> slices = new ArrayList<>();
        for (JsonNode e : events) {
            if (!e.path("cat").asText().equals("op")) {
                continue;
            }
            long ts = Math.round(e.path("ts").asDouble());
            long graphStart = -1;
            for (long[] g : graphs) { // graphs are few (a few hundred): a scan is fine in a test
                if (g[0] <= ts && ts <= g[1]) {
                    graphStart = g[0];
                    break;
                }
            }
            if (graphStart >= 0) {
                slices.add(new OpSlice(e.path("name").asText(), e.path("dur").asDouble(), graphStart));
            }
        }
        assertTrue(!slices.isEmpty(), "op slices inside graph slices in " + trace);
        return slices;
    }

    private static Map<String, Double> shares(List<OpSlice> slices) {
        Map<String, Double> time = new HashMap<>();
        for (OpSlice s : slices) {
            time.merge(s.op(), s.durUs(), Double::sum);
        }
        return normalised(time);
    }

    private static Map<String, Double> normalised(Map<String, Double> time) {
        double sum = time.values().stream().mapToDouble(Double::doubleValue).sum();
        Map<String, Double> share = new HashMap<>();
        time.forEach((op, t) -> share.put(op, sum > 0 ? t / sum : 0));
        return share;
    }

    private static double p50Us(List<OpSlice> slices, String op) {
        double[] durations = slices.stream().filter(s -> s.op().equals(op)).mapToDouble(OpSlice::durUs).sorted().toArray();
        assertTrue(durations.length > 0, "no " + op + " slice");
        return durations[durations.length / 2];
    }
}
