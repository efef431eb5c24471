package dev.infertop.it;

import static dev.infertop.it.Processes.alive;
import static dev.infertop.it.Processes.assertGone;
import static dev.infertop.it.Processes.killIfAlive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator layer's controls, on a real llama.cpp: the live switch (SIGUSR2) really detaches and re-attaches
 * its uprobes, {@code --op-every N} samples exactly every Nth CPU graph, {@code --op-when RULE} follows its rule
 * with the minimum dwell, {@code --threads} reports only the named threads, and {@code infertop overhead}
 * reports consistent figures.
 *
 * <p>Most tests trace a llama-bench on the tiny model that would run for hours ({@code -pg 32,32 -r 100000}).
 * On a loaded 2-core machine a 2-thread llama.cpp can stall for whole intervals (its threads spin at barriers
 * while the other core is taken), so the tests wait for what they need instead of counting on a rate, and
 * judge the {@code --op-when} decisions against the decode speed the same run reported.
 */
class OperatorControlsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern TRACING = Pattern.compile("tracing pid (\\d+) .*: (\\d+) probes attached");
    private static final Pattern SWITCHED = Pattern.compile("operator layer (on|off); (\\d+) probes attached");
    private static final Pattern PERF_UPROBE = Pattern.compile(
            "^pid (\\d+)\\s+fd \\d+: prog_id \\d+\\s+(uprobe|uretprobe)\\s+filename (\\S+)\\s+offset (\\d+)");
    private static final Pattern PLACEMENT = Pattern.compile(" @ (\\S+)\\+0x([0-9a-f]+): ");
    private static final int SIGUSR2 = 12;

    private static Path bench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() throws Throwable {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
        CleanupIT.restoreDefaultDispositions();
    }

    private static List<String> longBench() {
        return List.of(bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32",
                "-r", "100000", "-t", "2");
    }

    private static InfertopProcess launchLong(String... options) throws IOException {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(List.of(options));
        args.add("--");
        args.addAll(longBench());
        return InfertopProcess.start(args.toArray(String[]::new));
    }

    // ---- reading the session -------------------------------------------------------------------------------

    private static List<JsonNode> intervals(InfertopProcess infertop) throws IOException {
        return infertop.jsonLines().stream().filter(o -> !o.path("final").asBoolean()).toList();
    }

    /** The first interval after {@code afterSeq} that matches; fails with what was seen if none comes in time. */
    private static JsonNode awaitInterval(InfertopProcess infertop, long afterSeq, Predicate<JsonNode> condition,
                                          String what, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            for (JsonNode interval : intervals(infertop)) {
                if (interval.get("seq").asLong() > afterSeq && condition.test(interval)) {
                    return interval;
                }
            }
            if (!infertop.process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("no interval after #" + afterSeq + " with " + what + " within "
                        + timeoutSeconds + " s (alive: " + infertop.process.isAlive() + "); intervals:\n"
                        + summary(intervals(infertop)) + "\nstderr:\n" + infertop.stderrText());
            }
            Thread.sleep(50);
        }
    }

    private static String operatorState(JsonNode snapshot) {
        return snapshot.path("layers").path("operator").path("state").asText();
    }

    private static String operatorReason(JsonNode snapshot) {
        return snapshot.path("layers").path("operator").path("reason").asText();
    }

    /** Node executions the operator layer attributed in this snapshot ("ops" keeps ops seen earlier, at 0). */
    private static long opNodes(JsonNode snapshot) {
        long nodes = 0;
        for (JsonNode op : snapshot.path("ops")) {
            nodes += op.path("nodes").asLong();
        }
        return nodes;
    }

    /** Thread ids that reported node groups in this snapshot. */
    private static Set<Integer> reportingThreads(JsonNode snapshot) {
        Set<Integer> tids = new TreeSet<>();
        for (Iterator<String> it = snapshot.path("threads").fieldNames(); it.hasNext(); ) {
            String tid = it.next();
            if (snapshot.path("threads").path(tid).path("groups").asLong() > 0) {
                tids.add(Integer.parseInt(tid));
            }
        }
        return tids;
    }

    private static String summary(List<JsonNode> snapshots) {
        StringBuilder text = new StringBuilder();
        for (JsonNode s : snapshots) {
            text.append(String.format(java.util.Locale.ROOT,
                    "  #%d cpu_graphs %d, decode %.2f tok/s, op_graphs %d (+%d unattributed), op nodes %d, threads %s, lost %d, operator %s %s%n",
                    s.get("seq").asLong(), s.get("cpu_graph_computes").asLong(), s.get("decode_tokens_per_s").asDouble(),
                    s.get("op_graphs").asLong(), s.get("op_graphs_unattributed").asLong(), opNodes(s),
                    reportingThreads(s), s.get("lost_events").asLong(), operatorState(s), operatorReason(s)));
        }
        return text.toString();
    }

    private static int[] tracingLine(InfertopProcess infertop) {
        Matcher matcher = TRACING.matcher(infertop.stderrText());
        assertTrue(matcher.find(), "no 'tracing pid' line; stderr:\n" + infertop.stderrText());
        return new int[] {Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2))};
    }

    /** The probe count printed by the last "operator layer on|off; N probes attached" line in that state. */
    private static int switchedCount(InfertopProcess infertop, String state) {
        int count = -1;
        Matcher matcher = SWITCHED.matcher(infertop.stderrText());
        while (matcher.find()) {
            if (matcher.group(1).equals(state)) {
                count = Integer.parseInt(matcher.group(2));
            }
        }
        assertTrue(count >= 0, "no 'operator layer " + state + "' line; stderr:\n" + infertop.stderrText());
        return count;
    }

    /**
     * The uprobes whose perf events or uprobe-multi links {@code ownerPid} holds (bpftool lists the process holding
     * the fd, i.e. the infertop JVM), as "uprobe|uretprobe FILE+0xOFFSET", sorted. Other sessions' probes are not counted.
     */
    static List<String> uprobesOwnedBy(long ownerPid) throws Exception {
        List<String> probes = new ArrayList<>(perfUprobesOwnedBy(ownerPid));
        for (UprobeMultiLinks.Link link : UprobeMultiLinks.heldBy(ownerPid)) {
            probes.addAll(link.probes());
        }
        probes.sort(null);
        return probes;
    }

    /** The uprobes {@code ownerPid} holds as perf events (one fd each), not those of its uprobe-multi links. */
    static List<String> perfUprobesOwnedBy(long ownerPid) throws Exception {
        Process process = new ProcessBuilder(Requirements.bpftool().toString(), "perf", "show")
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), "bpftool perf show: " + output);
        List<String> probes = new ArrayList<>();
        for (String line : output.lines().toList()) {
            Matcher matcher = PERF_UPROBE.matcher(line.strip());
            if (matcher.find() && Long.parseLong(matcher.group(1)) == ownerPid) {
                probes.add(matcher.group(2) + " " + Path.of(matcher.group(3)).getFileName() + "+0x"
                        + Long.toHexString(Long.parseLong(matcher.group(4))));
            }
        }
        probes.sort(null);
        return probes;
    }

    /** Multiset difference: what {@code before} has that {@code after} does not. */
    private static List<String> removed(List<String> before, List<String> after) {
        List<String> rest = new ArrayList<>(before);
        for (String probe : after) {
            assertTrue(rest.remove(probe), "probe " + probe + " appeared that was not there before: " + after);
        }
        return rest;
    }

    /** The operator layer's placements as perf show names them: each is one entry uprobe. */
    private static List<String> operatorPlacementsAsUprobes(JsonNode total) {
        List<String> probes = new ArrayList<>();
        for (JsonNode placement : total.path("layers").path("operator").path("probes")) {
            if (placement.asText().contains(" not probed: ")) {
                continue; // fused-op calls left unprobed (groups inferred from the graph): no uprobe
            }
            Matcher matcher = PLACEMENT.matcher(placement.asText());
            assertTrue(matcher.find(), "placement without library+offset: " + placement);
            probes.add("uprobe " + matcher.group(1) + "+0x" + matcher.group(2));
            if (placement.asText().contains("(entry and return)")) {
                probes.add("uretprobe " + matcher.group(1) + "+0x" + matcher.group(2));
            }
        }
        probes.sort(null);
        return probes;
    }




    private static void stopWithSigterm(InfertopProcess infertop) throws Exception {
        LlamaBenchIT.signal(infertop.process.pid(), "TERM");
        assertEquals(128 + 15, infertop.waitFor(30), "stderr:\n" + infertop.stderrText());
    }

    // ---- 1. SIGUSR2 ------------------------------------------------------------------------------------------

    @Test
    void sigusr2DetachesAndReattachesTheOperatorProbesLive() throws Exception {
        long target = -1;
        // Every graph traced: under a budget the per-thread probes come and go between windows, and a count taken
        // then misses them.
        try (InfertopProcess infertop = launchLong("--budget", "0")) {
            infertop.awaitStderr("probes attached", 60);
            int[] tracing = tracingLine(infertop);
            target = tracing[0];
            long owner = infertop.process.pid();
            JsonNode reporting = awaitInterval(infertop, 0, i -> "on".equals(operatorState(i)) && opNodes(i) > 0,
                    "the operator layer on and reporting nodes", 120);
            List<String> before = uprobesOwnedBy(owner);
            assertEquals(tracing[1], before.size(), "bpftool perf show holds what infertop says it attached: " + before);
            assertTrue((CleanupIT.signalMask(owner, "SigCgt") & (1L << (SIGUSR2 - 1))) != 0,
                    "the infertop JVM catches SIGUSR2");

            LlamaBenchIT.signal(owner, "USR2");
            infertop.awaitStderr("operator layer off;", 30);
            List<String> off = uprobesOwnedBy(owner);
            assertEquals(switchedCount(infertop, "off"), off.size(), "perf show after the switch: " + off);
            JsonNode firstOff = awaitInterval(infertop, reporting.get("seq").asLong(),
                    i -> "off".equals(operatorState(i)), "the operator layer off", 30);
            assertEquals("switched off live", operatorReason(firstOff));
            // Intervals right after the switch may still hold nodes from before it: records written before the
            // switch and drained after it when the reader was behind (at thousands of graphs a second, and while
            // the switch itself blocks the collector as the kernel unregisters the uprobes). Wait for an interval
            // in which graphs ran and no operator data came (it never comes if the probes stayed attached), and
            // from there on every interval while off must be empty.
            // (Graphs in flight at the switch drain as unattributed: no operator data means neither kind.)
            JsonNode quiet = awaitInterval(infertop, firstOff.get("seq").asLong(),
                    i -> i.get("cpu_graph_computes").asLong() > 0 && opNodes(i) == 0
                            && i.get("op_graphs").asLong() + i.get("op_graphs_unattributed").asLong() == 0,
                    "CPU graphs and no operator data while the operator layer is off", 120);
            long settled = quiet.get("seq").asLong() - 1;
            assertEquals("off", operatorState(quiet), summary(intervals(infertop)));
            assertEquals(List.of(), off.stream().filter(p -> !before.contains(p)).toList());

            LlamaBenchIT.signal(owner, "USR2");
            infertop.awaitStderr("operator layer on;", 30);
            List<String> again = uprobesOwnedBy(owner);
            // The same probes are back; and the fused-op call sites where infertop has since found a graph whose
            // fused ops its inference got wrong (it says so, and probes them from then on: a start that reaches
            // "reporting" sooner can list the probes before that).
            assertEquals(List.of(), before.stream().filter(p -> !again.contains(p)).toList(),
                    "every probe from before is back: " + again);
            List<String> added = again.stream().filter(p -> !before.contains(p)).toList();
            if (!added.isEmpty()) {
                assertTrue(infertop.stderrText().contains("probing the fused-op calls from now on"),
                        "probes " + added + " came back that were not there before, and no fused-op calls were"
                                + " said to be probed:\n" + infertop.stderrText());
                assertTrue(added.stream().allMatch(p -> p.startsWith("uprobe libggml-cpu")),
                        "only fused-op call sites (libggml-cpu) may be new: " + added);
            }
            assertEquals(switchedCount(infertop, "on"), again.size());
            JsonNode back = awaitInterval(infertop, quiet.get("seq").asLong(),
                    i -> "on".equals(operatorState(i)) && opNodes(i) > 0, "the operator layer reporting again", 120);

            stopWithSigterm(infertop);
            JsonNode total = infertop.finalObject();
            List<JsonNode> all = intervals(infertop);
            System.out.println("SIGUSR2: uprobes " + before.size() + " -> " + off.size() + " -> " + again.size()
                    + "; removed " + removed(before, off) + "\n" + summary(all) + summary(List.of(total)));
            for (JsonNode interval : all) {
                long seq = interval.get("seq").asLong();
                if (seq > settled && "off".equals(operatorState(interval))) {
                    assertEquals(0, opNodes(interval), "no operator data while off: #" + seq + "\n" + summary(all));
                    assertEquals(0, interval.get("op_graphs").asLong() + interval.get("op_graphs_unattributed").asLong(),
                            "#" + seq);
                }
            }
            assertTrue(back.get("seq").asLong() > quiet.get("seq").asLong());
            assertEquals("on", operatorState(total));
            List<String> operatorProbes = operatorPlacementsAsUprobes(total);
            assertFalse(operatorProbes.isEmpty(), total.toString());
            assertEquals(operatorProbes, removed(before, off),
                    "the switch removed exactly the operator layer's probes and nothing else");
            assertEquals(before.size() - operatorProbes.size(), off.size());
            assertTrue(total.get("op_graphs").asLong() > 0, total.toString());
            assertGone(target);
            LeakCheck.assertNothingLeft();
        } finally {
            killIfAlive(target);
        }
    }

    // ---- 2. --op-every ---------------------------------------------------------------------------------------

    /**
     * A run of known length: {@code -p 0 -n 32 -r 3} computes 1 warm-up + 3 × 32 one-token graphs. The BPF side
     * numbers CPU graphs from 1 and walks those with {@code graph_seq % every == 0}: floor(97 / 4) = 24.
     */
    @Test
    void opEveryTracesExactlyEveryNthCpuGraph() throws Exception {
        int every = 4;
        long expectedGraphs = 1 + 3 * 32;
        // --budget 0: the every-Nth rule alone. Under the default budget a run longer than the first window (a
        // loaded machine's) has gaps, and the graphs in them are not traced whatever their number.
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--budget", "0", "--op-every",
                Integer.toString(every), "--", bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "32",
                "-r", "3", "-t", "2")) {
            assertEquals(0, infertop.waitFor(300), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            long cpuGraphs = total.get("cpu_graph_computes").asLong();
            long opGraphs = total.get("op_graphs").asLong() + total.get("op_graphs_unattributed").asLong();
            System.out.println("--op-every " + every + ": cpu_graph_computes " + cpuGraphs + ", op_graphs "
                    + total.get("op_graphs").asLong() + " + " + total.get("op_graphs_unattributed").asLong()
                    + " unattributed\n" + summary(List.of(total)));
            assertEquals("exited", total.get("target_state").asText());
            assertEquals(expectedGraphs, cpuGraphs, total.toString());
            assertEquals(0, total.get("lost_events").asLong());
            assertEquals("on", operatorState(total));
            assertEquals(cpuGraphs / every, opGraphs, "sampled graphs: seq % " + every + " == 0 over 1.." + cpuGraphs);
            assertTrue(total.get("op_graphs").asLong() > 0, "sampled graphs are attributed: " + total);
            assertTrue(opNodes(total) > 0, total.toString());
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    // ---- 3. --op-when ----------------------------------------------------------------------------------------

    /**
     * What infertop must have done, replayed from the decode speed it reported: the rule is evaluated at each
     * tick on the interval before it (none before the first), and a change waits until
     * {@value #DWELL} intervals have passed since the last change (or the start). Returns the expected state
     * ("on"/"off") after each snapshot, the final one included.
     */
    private static final int DWELL = 2;

    private static List<String> replayRule(List<JsonNode> snapshots, Predicate<Double> rule) {
        List<String> expected = new ArrayList<>();
        boolean on = false;
        int dwell = 0;
        JsonNode previous = null;
        for (JsonNode snapshot : snapshots) {
            if (previous != null && ++dwell >= DWELL) {
                boolean holds = rule.test(previous.get("decode_tokens_per_s").asDouble());
                if (holds != on) {
                    on = holds;
                    dwell = 0;
                }
            }
            expected.add(on ? "on" : "off");
            previous = snapshot;
        }
        return expected;
    }

    @Test
    void opWhenRuleThatNeverHoldsKeepsTheOperatorProbesOff() throws Exception {
        String rule = "tps<0.001";
        long target = -1;
        try (InfertopProcess infertop = launchLong("-n", "8", "--op-when", rule)) {
            infertop.awaitStderr("probes attached", 60);
            int[] tracing = tracingLine(infertop);
            target = tracing[0];
            assertTrue(infertop.stderrText().contains("operator off"), infertop.stderrText());
            int maxProbes = 0;
            while (infertop.process.isAlive()) {
                maxProbes = Math.max(maxProbes, uprobesOwnedBy(infertop.process.pid()).size());
                Thread.sleep(100);
            }
            assertEquals(0, infertop.waitFor(30), infertop.stderrText());
            List<JsonNode> all = infertop.jsonLines();
            JsonNode total = infertop.finalObject();
            System.out.println("--op-when '" + rule + "': at most " + maxProbes + " uprobes (token+graph "
                    + tracing[1] + ")\n" + summary(all));
            List<String> expected = replayRule(all, tps -> tps < 0.001);
            List<String> seen = all.stream().map(OperatorControlsIT::operatorState).toList();
            assertEquals(expected, seen, "operator state per snapshot vs the rule replayed\n" + summary(all));
            for (JsonNode snapshot : all) {
                if ("off".equals(operatorState(snapshot))) {
                    assertTrue(operatorReason(snapshot).startsWith("--op-when '" + rule + "'"), snapshot.toString());
                }
            }
            // The rule is really evaluated: the layer ends "does not hold" rather than "not evaluated yet".
            assertTrue(all.stream().anyMatch(s -> s.get("decode_tokens_per_s").asDouble() >= 0.001),
                    "the target decoded during the run\n" + summary(all));
            if (!expected.contains("on")) {
                // The usual case: the target decoded in every evaluated interval, so the layer never came on.
                assertEquals(tracing[1], maxProbes, "the operator probes were never attached");
                assertEquals(0, total.get("op_graphs").asLong() + total.get("op_graphs_unattributed").asLong());
                assertEquals(0, opNodes(total));
                assertEquals(0, total.path("layers").path("operator").path("probes").size(), total.toString());
                assertEquals("--op-when '" + rule + "' does not hold", operatorReason(total));
            } else {
                System.out.println("--op-when: an interval without decoding (a stalled target) made '" + rule
                        + "' hold; the replay above checked each switch");
            }
            assertGone(target);
            LeakCheck.assertNothingLeft();
        } finally {
            killIfAlive(target);
        }
    }

    @Test
    void opWhenRuleThatHoldsAttachesTheOperatorLayerAfterTheDwell() throws Exception {
        String rule = "tps>0.001";
        long target = -1;
        try (InfertopProcess infertop = launchLong("--op-when", rule)) {
            infertop.awaitStderr("probes attached", 60);
            int[] tracing = tracingLine(infertop);
            target = tracing[0];
            JsonNode first = awaitInterval(infertop, 0, i -> true, "any interval", 30);
            assertEquals("off", operatorState(first));
            assertEquals("--op-when '" + rule + "' not evaluated yet", operatorReason(first));
            JsonNode on = awaitInterval(infertop, 0, i -> "on".equals(operatorState(i)), "the operator layer on", 60);
            int probesOn = uprobesOwnedBy(infertop.process.pid()).size();
            awaitInterval(infertop, on.get("seq").asLong(), i -> opNodes(i) > 0, "operator nodes reported", 120);
            stopWithSigterm(infertop);
            List<JsonNode> all = infertop.jsonLines();
            JsonNode total = infertop.finalObject();
            System.out.println("--op-when '" + rule + "': on at #" + on.get("seq").asLong() + ", uprobes "
                    + tracing[1] + " -> " + probesOn + "\n" + summary(all));
            assertTrue(on.get("seq").asLong() >= 3, "not before the rule could be evaluated with its dwell");
            List<String> expected = replayRule(all, tps -> tps > 0.001);
            List<String> seen = all.stream().map(OperatorControlsIT::operatorState).toList();
            assertEquals(expected, seen, "operator state per snapshot vs the rule replayed\n" + summary(all));
            assertTrue(probesOn > tracing[1], "the operator probes were attached: " + tracing[1] + " -> " + probesOn);
            assertTrue(total.get("op_graphs").asLong() > 0, total.toString());
            if ("on".equals(operatorState(total))) {
                assertFalse(operatorPlacementsAsUprobes(total).isEmpty(), total.toString());
            } else {
                // An interval without decoding (a stalled target, a loaded machine) ended the rule's hold: the
                // replay above checked that switch; the final object lists no placement of a detached layer.
                assertEquals("--op-when '" + rule + "' does not hold", operatorReason(total));
                assertTrue(operatorPlacementsAsUprobes(total).isEmpty(), total.toString());
            }
            assertGone(target);
            LeakCheck.assertNothingLeft();
        } finally {
            killIfAlive(target);
        }
    }

    // ---- 4. --threads ----------------------------------------------------------------------------------------

    private static Set<Integer> tasksOf(long pid) throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            return tasks.map(p -> Integer.parseInt(p.getFileName().toString())).collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    /** Traces the attached target until the operator layer reports nodes, then stops; returns the final object. */
    private static JsonNode traceUntilOperatorNodes(long pid, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "-p", Long.toString(pid)));
        args.addAll(List.of(options));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            infertop.awaitStderr("probes attached", 60);
            awaitInterval(infertop, 0, i -> opNodes(i) > 0, "operator nodes reported", 120);
            stopWithSigterm(infertop);
            System.out.println("infertop -p " + pid + " " + String.join(" ", options) + ":\n"
                    + summary(infertop.jsonLines()));
            return infertop.finalObject();
        }
    }

    @Test
    void threadsOptionReportsOnlyTheNamedThread() throws Exception {
        Process target = new ProcessBuilder(longBench()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            LlamaBenchIT.awaitMapped(target.pid(), 10, "libllama.");
            Set<Integer> all = reportingThreads(traceUntilOperatorNodes(target.pid()));
            Set<Integer> tasks = tasksOf(target.pid());
            assertTrue(all.size() >= 2, "llama-bench -t 2 computes on two threads: " + all);
            assertTrue(tasks.containsAll(all), "reporting threads " + all + " are the target's tasks " + tasks);
            int chosen = all.stream().filter(tid -> tid != target.pid()).findFirst().orElseThrow();

            JsonNode total = traceUntilOperatorNodes(target.pid(), "--threads", Integer.toString(chosen));
            Set<Integer> listed = new TreeSet<>();
            total.path("threads").fieldNames().forEachRemaining(tid -> listed.add(Integer.parseInt(tid)));
            System.out.println("--threads: all " + all + ", chosen " + chosen + ", reported " + listed);
            assertEquals(Set.of(chosen), listed, "only the named thread: " + total.path("threads"));
            assertEquals(Set.of(chosen), reportingThreads(total));
            assertTrue(total.get("op_graphs").asLong() > 0, total.toString());
            assertTrue(opNodes(total) > 0, total.toString());
            LeakCheck.assertNothingLeft();
            assertTrue(target.isAlive(), "the attached llama-bench survives both sessions");
        } finally {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }

    // ---- 5. infertop overhead --------------------------------------------------------------------------------

    @Test
    void overheadCommandReportsConsistentFigures() throws Exception {
        int pairs = 2;
        int generated = 32;
        int repetitions = 2;
        // llama-bench's warm-up token, then its reps; each run's first token (position 0) is its prompt
        long expectedTokens = new LlamaBenchRun(0, generated, repetitions).generatedTokensCounted();
        try (InfertopProcess overhead = InfertopProcess.start("overhead", "--pairs", Integer.toString(pairs),
                "--layers", "token,graph", "--json", "--", bench.toString(), "-m", tinyModel.toString(), "-p", "0",
                "-n", Integer.toString(generated), "-r", Integer.toString(repetitions), "-t", "2")) {
            assertEquals(0, overhead.waitFor(300), overhead.stderrText());
            assertEquals(1, overhead.stdout.size(), "one JSON object: " + overhead.stdout);
            JsonNode result = JSON.readTree(overhead.stdout.getFirst());
            System.out.println("overhead: " + result + "\n" + overhead.stderrText());
            assertEquals(pairs, result.get("pairs").asInt());
            assertEquals("token,graph", result.get("layers").asText());
            JsonNode speeds = result.get("decode_tokens_per_s");
            assertEquals(pairs, speeds.size(), result.toString());
            List<Double> ratios = new ArrayList<>();
            for (JsonNode pair : speeds) {
                assertTrue(pair.get(0).asDouble() > 0 && pair.get(1).asDouble() > 0, result.toString());
                ratios.add(pair.get(1).asDouble() / pair.get(0).asDouble());
            }
            double median = result.get("decode_ratio_median").asDouble();
            double min = result.get("decode_ratio_min").asDouble();
            double max = result.get("decode_ratio_max").asDouble();
            assertTrue(median > 0 && min <= median && median <= max, result.toString());
            ratios.sort(null);
            assertEquals((ratios.get(0) + ratios.get(1)) / 2, median, 1e-9, "median of the pairs' ratios");
            assertEquals(ratios.get(0), min, 1e-9);
            assertEquals(ratios.get(1), max, 1e-9);
            assertTrue(result.get("target_cpu_s_median_without").asDouble() > 0, result.toString());
            assertTrue(result.get("target_cpu_s_median_with").asDouble() > 0, result.toString());
            assertEquals(expectedTokens, result.get("tokens_decode").asLong(), result.toString());
            assertTrue(result.get("target_cpu_ms_per_token_without").asDouble() > 0, result.toString());
            assertTrue(result.get("target_cpu_ms_per_token_with").asDouble() > 0, result.toString());
            assertEquals(2 * pairs, overhead.stderr.stream().filter(l -> l.startsWith("infertop overhead: pair")).count(),
                    overhead.stderrText());
            // One warm-up pair (the default) runs first and is not counted.
            assertEquals(1, result.get("warmup_pairs").asInt(), result.toString());
            assertEquals(2, overhead.stderr.stream().filter(l -> l.startsWith("infertop overhead: warm-up")).count(),
                    overhead.stderrText());
            // infertop's own JVM used some CPU in every traced run, and the spread brackets the median.
            double ownMedian = result.get("infertop_cpu_s_median").asDouble();
            assertTrue(ownMedian > 0, result.toString());
            assertTrue(result.get("infertop_cpu_s_min").asDouble() <= ownMedian
                    && ownMedian <= result.get("infertop_cpu_s_max").asDouble(), result.toString());
            assertEquals(1000 * ownMedian / expectedTokens, result.get("infertop_cpu_ms_per_token").asDouble(), 1e-9,
                    result.toString());
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    private static void assertOneLineUsageError(String... args) throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start(args)) {
            int status = infertop.waitFor(60);
            String shown = String.join(" ", args) + "\nstderr:\n" + infertop.stderrText() + "\nstdout:\n"
                    + String.join("\n", infertop.stdout);
            assertEquals(2, status, shown);
            assertEquals(1, infertop.stderr.size(), "exactly one line; " + shown);
            assertTrue(infertop.stderr.getFirst().startsWith("infertop: "), shown);
            assertFalse(infertop.stderr.getFirst().contains("Exception"), shown);
            assertEquals(List.of(), infertop.stdout, shown);
        }
        LeakCheck.assertNothingLeft();
    }

    @Test
    void badControlValuesFailWithOneLine() throws Exception {
        assertOneLineUsageError("overhead", "--pairs", "0", "--", "x");
        assertOneLineUsageError("--op-when", "bogus", "--", bench.toString(), "-m", tinyModel.toString());
    }
}
