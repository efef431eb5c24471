package dev.infertop.it;

import static dev.infertop.it.Processes.assertGone;
import static dev.infertop.it.Processes.killIfAlive;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sched layer on a real llama.cpp: a 2-thread llama-bench pinned to CPU 0 while a busy loop (a copy of
 * {@code yes} named {@code infertop-hog}, output discarded) is pinned there too. infertop must name the hog,
 * by comm and pid, as the task that ran longest while the target's threads waited for the CPU, with a
 * plausible share of that wait; without the hog it must not appear. The tracepoint links must exist while
 * tracing and be gone afterwards.
 *
 * <p>The hog runs at nice -5 so that it, not the other load of a shared test machine, is the main cause of
 * the target's waits; on a quiet machine nice 0 would do.
 */
class SchedInterferenceIT {
    private static final Pattern TRACING = Pattern.compile("tracing pid (\\d+) ");
    private static final String HOG = "infertop-hog";

    private static Path bench;
    private static Path tinyModel;
    private static Path hogBinary;

    @BeforeAll
    static void requirements() throws Throwable {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
        Path taskset = Path.of("/usr/bin/taskset");
        Requirements.require(Files.isExecutable(taskset), "taskset (util-linux) is needed to pin the hog");
        Path dir = Files.createTempDirectory("infertop-sched");
        hogBinary = dir.resolve(HOG);
        Files.copy(Path.of("/usr/bin/yes"), hogBinary, StandardCopyOption.REPLACE_EXISTING);
        hogBinary.toFile().setExecutable(true);
        CleanupIT.restoreDefaultDispositions();
    }

    private static Process startHog() throws Exception {
        // In a session of its own, as another program is: with autogroup on, the CPU is shared between sessions
        // first, the launched target has a session of its own, and this JVM's session may have any autogroup
        // nice (an attaching infertop's start boost raises it, a CI runner may have set it): the hog would then
        // weigh that, not its nice value. setsid execs in place (this JVM's child leads no process group).
        Process hog = new ProcessBuilder("setsid", "taskset", "-c", "0", "nice", "-n", "-5", hogBinary.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Path comm = Path.of("/proc", Long.toString(hog.pid()), "comm");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(Files.exists(comm) && Files.readString(comm).strip().equals(HOG))) { // setsid, taskset, nice, then exec
            assertTrue(System.nanoTime() < deadline && hog.isAlive(), "the hog did not start");
            Thread.sleep(10);
        }
        return hog;
    }

    /** Traces a long llama-bench for a few intervals, pinned to CPU 0 once attached; the final JSON object. */
    private static JsonNode traceBench(Set<String> linksWhileTracing) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "-n", "6", "--layers", "token,operator,sched",
                "--", bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32",
                "-r", "100000", "-t", "2"));
        Set<String> before = tracingLinks();
        long target = -1;
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            infertop.awaitStderr("probes attached", 60);
            Matcher matcher = TRACING.matcher(infertop.stderrText());
            assertTrue(matcher.find(), infertop.stderrText());
            target = Long.parseLong(matcher.group(1));
            Process pin = new ProcessBuilder("taskset", "-a", "-p", "-c", "0", Long.toString(target))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertEquals(0, pin.waitFor(), "taskset could not pin the target");
            // infertop itself (nice 10 while tracing) gets the other CPU: the nice -5 hog on CPU 0 must not
            // starve the observer, only the observed.
            Process pinSelf = new ProcessBuilder("taskset", "-a", "-p", "-c", "1", Long.toString(infertop.process.pid()))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertEquals(0, pinSelf.waitFor(), "taskset could not pin infertop");
            Set<String> during = tracingLinks();
            during.removeAll(before);
            linksWhileTracing.addAll(during);
            assertTrue(infertop.process.waitFor(120, TimeUnit.SECONDS), "infertop did not stop after -n 6:\n"
                    + infertop.stderrText());
            assertEquals(0, infertop.process.exitValue(), infertop.stderrText());
            JsonNode last = infertop.finalObject();
            assertGone(target);
            Set<String> after = tracingLinks();
            after.removeAll(before);
            assertEquals(Set.of(), after, "tracepoint links left behind");
            LeakCheck.assertNothingLeft();
            return last;
        } finally {
            killIfAlive(target);
        }
    }

    /** `bpftool link show` entries of tp_btf links (type tracing or raw_tracepoint by kernel), as "id: type prog N". */
    static Set<String> tracingLinks() throws IOException, InterruptedException {
        String output = Processes.output(Requirements.bpftool().toString(), "link", "show");
        Set<String> links = new TreeSet<>();
        for (String line : output.split("\n")) {
            if (line.matches("^\\d+: (tracing|raw_tracepoint) .*")) {
                links.add(line.strip());
            }
        }
        return links;
    }

    /** Processes that used at least a third of a core over 300 ms: other work on the machine. */
    private static java.util.Set<Long> busyProcesses() throws InterruptedException {
        java.util.Map<Long, Long> cpuNs = new java.util.HashMap<>();
        ProcessHandle.allProcesses().forEach(p -> p.info().totalCpuDuration()
                .ifPresent(d -> cpuNs.put(p.pid(), d.toNanos())));
        Thread.sleep(300);
        java.util.Set<Long> busy = new java.util.HashSet<>();
        ProcessHandle.allProcesses().forEach(p -> p.info().totalCpuDuration().ifPresent(d -> {
            Long earlier = cpuNs.get(p.pid());
            if (earlier != null && d.toNanos() - earlier >= 100_000_000L) {
                busy.add(p.pid());
            }
        }));
        return busy;
    }

    @Test
    void aPinnedHogIsNamedAsTheTopInterferer() throws Exception {
        java.util.Set<Long> busyBefore = busyProcesses();
        Process hog = startHog();
        JsonNode last;
        Set<String> links = new TreeSet<>();
        try {
            last = traceBench(links);
        } finally {
            hog.destroyForcibly();
            hog.waitFor(5, TimeUnit.SECONDS);
        }
        assertEquals(2, links.size(), "sched_switch and sched_wakeup links while tracing: " + links);
        JsonNode sched = last.path("sched");
        assertEquals("on", last.path("layers").path("sched").path("state").asText(), last.toString());
        assertTrue(sched.path("runnable_ns").asLong() > 0, "no runnable time: " + sched);
        assertTrue(sched.path("threads").size() >= 2, "the bench's threads: " + sched);
        // Work that already kept a core busy before the test (a loaded CI host's busy loops) interferes as much as
        // the hog: the hog must lead every other process, those excepted.
        JsonNode top = null;
        List<String> before = new ArrayList<>();
        for (JsonNode culprit : sched.path("interferers")) {
            if (culprit.path("pid").asLong() != hog.pid() && busyBefore.contains(culprit.path("pid").asLong())) {
                before.add(culprit.path("comm").asText() + " " + culprit.path("wait_share").asDouble());
                continue;
            }
            top = culprit;
            break;
        }
        if (!before.isEmpty()) {
            System.out.println("SchedInterferenceIT: ahead of the hog, processes busy before the test: " + before);
        }
        assertTrue(top != null, "no interferer: " + sched.path("interferers"));
        assertEquals(HOG, top.path("comm").asText(), "top interferer: " + sched.path("interferers"));
        assertEquals(hog.pid(), top.path("pid").asLong(), "top interferer: " + sched.path("interferers"));
        double share = top.path("wait_share").asDouble();
        System.out.printf("SchedInterferenceIT: runnable %d ms over %d threads; top interferer %s (%d) %d ms, "
                + "%.1f%% of the wait; next %s%n", sched.path("runnable_ns").asLong() / 1_000_000,
                sched.path("threads").size(), top.path("comm").asText(), top.path("pid").asLong(),
                top.path("ns").asLong() / 1_000_000, 100 * share, sched.path("interferers").path(1));
        // Both bench threads wait on CPU 0, where the hog runs most of the time they are off it.
        assertTrue(share >= 0.2 && share <= 1.0, "hog's share of the wait: " + share + " in " + sched);
        // Per op: the threads' waits fall inside node groups, most of the time in matrix multiplications.
        assertTrue(sched.path("ops").path("MUL_MAT").path("runnable_ns").asLong() > 0, "per-op: " + sched);
        // The handlers run on every switch of the machine; the target's own switches are a part of those (a
        // switch-in record may be followed by up to eight culprit records, so records are no bound).
        long targetSwitches = 0;
        for (JsonNode thread : sched.path("threads")) {
            targetSwitches += thread.path("switches").asLong();
        }
        assertTrue(targetSwitches > 0 && sched.path("kernel_hits").asLong() >= targetSwitches,
                "the handlers run on every switch, the target's among them: " + sched);
    }

    @Test
    void withoutTheHogItIsAbsent() throws Exception {
        JsonNode last = traceBench(new TreeSet<>());
        JsonNode sched = last.path("sched");
        assertTrue(sched.path("threads").size() >= 2, "thread states still reported: " + sched);
        for (JsonNode culprit : sched.path("interferers")) {
            assertFalse(culprit.path("comm").asText().equals(HOG), "a hog that was not running: " + sched);
        }
    }
}
