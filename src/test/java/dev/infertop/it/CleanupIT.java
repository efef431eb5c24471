package dev.infertop.it;

import static dev.infertop.it.Processes.alive;
import static dev.infertop.it.Processes.assertGone;
import static dev.infertop.it.Processes.killIfAlive;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every way a session ends leaves nothing behind: no probe, no BPF program, no gate directory, no launched
 * command still running; and every way still prints the final JSON object. An attached process is never
 * stopped.
 *
 * <p>The target is a llama-bench on the tiny model that would run for hours ({@code -pg 32,32 -r 100000}), so
 * it is always mid-run when the session ends.
 */
class CleanupIT {
    private static final Pattern TRACING_PID = Pattern.compile("tracing pid (\\d+)");
    private static final int SIGHUP = 1;
    private static final int SIGINT = 2;
    private static final int SIGTERM = 15;

    private static Path bench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() throws Throwable {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
        restoreDefaultDispositions();
    }

    /**
     * A shell runs background jobs with SIGINT ignored, the ignored disposition survives exec, and a JVM that
     * starts with SIGHUP ignored keeps it ignored, as under nohup (SIGINT infertop takes back, a test below). So
     * when this test JVM was started that way, the signal tests would not test what a user's terminal does:
     * give the signals their default disposition here, which the infertop JVM then inherits.
     */
    static void restoreDefaultDispositions() throws Throwable {
        long ignored = signalMask(ProcessHandle.current().pid(), "SigIgn");
        Linker linker = Linker.nativeLinker();
        MethodHandle signal = linker.downcallHandle(linker.defaultLookup().find("signal").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
        for (int sig : new int[] {SIGHUP, SIGINT, SIGTERM}) {
            if ((ignored & (1L << (sig - 1))) != 0) {
                MemorySegment previous = (MemorySegment) signal.invokeExact(sig, MemorySegment.NULL); // SIG_DFL
                assertEquals(1L, previous.address(), "signal " + sig + " was SIG_IGN");
            }
        }
    }

    static long signalMask(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseUnsignedLong(line.substring(field.length() + 1).strip(), 16);
            }
        }
        throw new AssertionError("no " + field + " in /proc/" + pid + "/status");
    }

    private static List<String> longBench() {
        return List.of(bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32",
                "-r", "100000", "-t", "1");
    }

    /** The long llama-bench on its own, for an attach with -p, its libraries mapped. */
    private static Process startLongBench() throws Exception {
        Process target = new ProcessBuilder(longBench()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            LlamaBenchIT.awaitMapped(target.pid(), 10, "libllama.");
        } catch (Throwable e) {
            target.destroyForcibly();
            throw e;
        }
        return target;
    }

    private static InfertopProcess launch(String... options) throws IOException {
        return launch(java.util.Map.of(), options);
    }

    private static InfertopProcess launch(java.util.Map<String, String> environment, String... options)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(List.of(options));
        args.add("--");
        args.addAll(longBench());
        return InfertopProcess.start(environment, args.toArray(String[]::new));
    }

    /** Waits for the probes and one interval line: the session is fully up and the target is decoding. */
    private static void awaitTracing(InfertopProcess infertop) throws InterruptedException {
        infertop.awaitStderr("probes attached", 60);
        // A decode call seen, not only a first interval: on a loaded machine the model may still be loading then.
        infertop.awaitJson("a decode call", line -> line.path("decode_calls").asLong() > 0, 120);
    }

    private static long tracedPid(InfertopProcess infertop) {
        Matcher matcher = TRACING_PID.matcher(infertop.stderrText());
        assertTrue(matcher.find(), "no 'tracing pid' line; stderr:\n" + infertop.stderrText());
        return Long.parseLong(matcher.group(1));
    }

    private static Set<Path> gateDirectories() throws IOException {
        try (Stream<Path> entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return entries.filter(p -> p.getFileName().toString().startsWith("infertop-gate-"))
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    private static void assertNoNewGateDirectories(Set<Path> before) throws IOException {
        Set<Path> now = gateDirectories();
        now.removeAll(before);
        assertEquals(Set.of(), now, "gate directories left behind");
    }




    @Test
    void iterationLimitEndsSessionAndStopsTheLaunchedCommand() throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        long target = -1;
        try (InfertopProcess infertop = launch("-n", "2")) {
            infertop.awaitStderr("probes attached", 60);
            target = tracedPid(infertop);
            assertEquals(0, infertop.waitFor(60), "-n reached is a normal end; stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals(3, infertop.jsonLines().size(), "2 intervals, then the final object");
            assertTrue(total.get("decode_calls").asLong() > 0, total.toString());
            assertGone(target);
            LeakCheck.assertNothingLeft();
            assertNoNewGateDirectories(gatesBefore);
        } finally {
            killIfAlive(target);
        }
    }

    /**
     * An Error ends infertop like any other end: INFERTOP_TEST_INJECT (session.InjectedFault) throws one at the
     * third interval, on the collector's thread (the main thread: it unwinds through the session's clean-up) or on
     * a thread of its own (the default handler: the shutdown hook cleans up). Either way: exit status 70, exactly
     * one line on stderr about it and no stack trace, the launched llama-bench stopped, nothing in the kernel.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"oom-after-ticks:3, fatal error: java.lang.OutOfMemoryError: injected",
            "stack-overflow-after-ticks:3, fatal error: java.lang.StackOverflowError",
            "oom-in-thread-after-ticks:3, fatal error in thread infertop-injected: java.lang.OutOfMemoryError: injected"})
    void anErrorEndsTheSessionWithOneLineAndLeavesNothing(String inject, String line) throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        long target = -1;
        try (InfertopProcess infertop = launch(java.util.Map.of("INFERTOP_TEST_INJECT", inject))) {
            infertop.awaitStderr("probes attached", 60);
            target = tracedPid(infertop);
            assertEquals(70, infertop.waitFor(60), "stderr:\n" + infertop.stderrText());
            String stderr = infertop.stderrText();
            List<String> about = infertop.stderr.stream().filter(l -> l.contains("Error")).toList();
            assertEquals(1, about.size(), "one line about it; stderr:\n" + stderr);
            assertTrue(about.getFirst().startsWith("infertop: " + line), about.getFirst());
            assertTrue(about.getFirst().endsWith("(run with INFERTOP_DEBUG=1 for details, and please report it)"),
                    about.getFirst());
            assertFalse(stderr.contains("at dev.infertop") || stderr.contains("\tat ")
                    || stderr.contains("Exception in thread"), "a stack trace:\n" + stderr);
            assertTrue(infertop.jsonLines().size() >= 2, "it traced until the error: " + infertop.stdout);
            assertGone(target);
            LeakCheck.assertNothingLeft();
            assertNoNewGateDirectories(gatesBefore);
        } finally {
            killIfAlive(target);
        }
    }

    @ParameterizedTest(name = "SIG{0}")
    @CsvSource({"INT, 2", "TERM, 15", "HUP, 1"})
    void signalToInfertopEndsSessionCleanly(String signal, int number) throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        long target = -1;
        try (InfertopProcess infertop = launch()) {
            awaitTracing(infertop);
            target = tracedPid(infertop);
            long infertopPid = infertop.process.pid();
            assertTrue((signalMask(infertopPid, "SigCgt") & (1L << (number - 1))) != 0,
                    "the infertop JVM catches SIG" + signal);
            LlamaBenchIT.signal(infertopPid, signal);
            assertEquals(128 + number, infertop.waitFor(30), "stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertTrue(total.get("decode_calls").asLong() > 0, total.toString());
            assertGone(target);
            LeakCheck.assertNothingLeft();
            assertNoNewGateDirectories(gatesBefore);
        } finally {
            killIfAlive(target);
        }
    }

    @Test
    void killedTargetIsNoticedAndSessionEnds() throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        long target = -1;
        try (InfertopProcess infertop = launch()) {
            awaitTracing(infertop);
            target = tracedPid(infertop);
            LlamaBenchIT.signal(target, "KILL");
            // the launched command's own status: killed by SIGKILL
            assertEquals(128 + 9, infertop.waitFor(30), "stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText(), total.toString());
            assertTrue(total.get("decode_calls").asLong() > 0, total.toString());
            LeakCheck.assertNothingLeft();
            assertNoNewGateDirectories(gatesBefore);
        } finally {
            killIfAlive(target);
        }
    }

    /**
     * A script's background job ({@code infertop --json -p PID > log &}) starts with SIGINT ignored; a JVM keeps
     * it so, and {@code kill -INT} left infertop tracing. It stops now; an ignored SIGHUP (nohup) stays ignored.
     */
    @Test
    void sigintStopsInfertopStartedAsABackgroundJobWhileAnIgnoredSighupStaysIgnored() throws Exception {
        Process target = startLongBench();
        try {
            try (InfertopProcess infertop = InfertopProcess.startIgnoring(List.of("INT", "HUP"), "--json", "-d",
                    "0.5", "-p", Long.toString(target.pid()))) {
                awaitTracing(infertop);
                long infertopPid = infertop.process.pid();
                assertTrue((signalMask(infertopPid, "SigIgn") & (1L << (SIGHUP - 1))) != 0,
                        "infertop started with SIGHUP ignored, as under nohup");
                LlamaBenchIT.signal(infertopPid, "HUP");
                int linesBefore = infertop.jsonLines().size();
                assertFalse(infertop.process.waitFor(2, TimeUnit.SECONDS), "an ignored SIGHUP stopped infertop; "
                        + "stderr:\n" + infertop.stderrText());
                assertTrue(infertop.jsonLines().size() > linesBefore, "intervals go on after the ignored SIGHUP");
                LlamaBenchIT.signal(infertopPid, "INT");
                assertEquals(128 + SIGINT, infertop.waitFor(30), "stderr:\n" + infertop.stderrText());
                assertTrue(infertop.finalObject().get("decode_calls").asLong() > 0, infertop.finalObject().toString());
            }
            LeakCheck.assertNothingLeft();
            assertTrue(target.isAlive(), "the attached llama-bench did not survive infertop");
        } finally {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void attachedTargetSurvivesSigtermToInfertop() throws Exception {
        Process target = startLongBench();
        try {
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-p",
                    Long.toString(target.pid()))) {
                awaitTracing(infertop);
                assertEquals(target.pid(), tracedPid(infertop));
                LlamaBenchIT.signal(infertop.process.pid(), "TERM");
                assertEquals(128 + SIGTERM, infertop.waitFor(30), "stderr:\n" + infertop.stderrText());
                JsonNode total = infertop.finalObject();
                assertTrue(total.get("decode_calls").asLong() > 0, total.toString());
            }
            // probes gone from a process that still runs (and still decodes: it must not trap on a stale probe)
            LeakCheck.assertNothingLeft();
            assertFalse(target.waitFor(2, TimeUnit.SECONDS), "the attached llama-bench did not survive infertop");
            assertTrue(target.isAlive());
        } finally {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
