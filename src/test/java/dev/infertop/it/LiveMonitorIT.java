package dev.infertop.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The full-screen view as a user gets it: infertop in a tmux pane (a real terminal) on a real llama-bench,
 * driven with send-keys and read back with capture-pane. Checks tokens/s and operator rows appear, the
 * operator layer's key really detaches and re-attaches its probes ({@code bpftool perf show}), sort and filter
 * keys change the rows, a resize re-lays out, and q restores the terminal and leaves nothing behind; a
 * dropped terminal (the pane killed: SIGHUP) leaves nothing behind either.
 */
class LiveMonitorIT {
    private static final Pattern PID = Pattern.compile("pid (\\d+) llama-bench");
    private static Path bench;
    private static Path tinyModel;
    private static Path launcher;
    private static Path tmux;
    private String session;

    @BeforeAll
    static void requirements() {
        Requirements.requireRoot();
        Requirements.bpftool();
        Requirements.jar();
        bench = Requirements.llamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
        tmux = Path.of("/usr/bin/tmux");
        Requirements.require(Files.isExecutable(tmux), "needs tmux (apt-get install -y tmux) to drive the live view");
        launcher = Path.of("src/scripts/infertop").toAbsolutePath();
        Requirements.require(Files.isExecutable(launcher), "needs the launcher " + launcher);
    }

    @AfterEach
    void killSession() throws Exception {
        if (session != null) {
            run(tmux.toString(), "kill-session", "-t", session);
        }
    }

    /** Starts infertop on a long llama-bench in a detached 100x30 tmux pane; the shell reports its exit status. */
    private void start() throws Exception {
        start(100000);
    }

    private void start(int repetitions) throws Exception {
        session = "infertop-it-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000;
        String command = String.join(" ", List.of(launcher.toString(), "--", bench.toString(), "-m",
                tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32", "-r", Integer.toString(repetitions), "-t", "2"));
        run(tmux.toString(), "new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                "-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + command + "; echo EXITED-$?; sleep 600'");
        run(tmux.toString(), "set-option", "-t", session, "window-size", "manual");
    }

    private String capture() throws Exception {
        return run(tmux.toString(), "capture-pane", "-p", "-t", session);
    }

    private String awaitScreen(String what, Predicate<String> condition, int timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = capture();
            if (condition.test(screen)) {
                return screen;
            }
            Thread.sleep(250);
        }
        fail("screen never showed " + what + " within " + timeoutSeconds + " s; last screen:\n" + screen);
        return screen;
    }

    private void keys(String... keys) throws Exception {
        List<String> command = new ArrayList<>(List.of(tmux.toString(), "send-keys", "-t", session));
        command.addAll(List.of(keys));
        run(command.toArray(String[]::new));
    }

    private static List<String> lines(String screen) {
        return screen.lines().toList();
    }

    /** The table rows under the heading line that starts with {@code heading}, up to the first blank line. */
    private static List<String> tableRows(String screen, String heading) {
        List<String> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : lines(screen)) {
            if (line.startsWith(heading)) {
                inTable = true;
            } else if (inTable) {
                if (line.isBlank() || line.startsWith("h help")) {
                    break;
                }
                rows.add(line);
            }
        }
        return rows;
    }

    /** The infertop JVM in the pane: the launcher script execs java in place of the shell's child. */
    private long infertopPid() throws Exception {
        long shell = Long.parseLong(run(tmux.toString(), "display-message", "-p", "-t", session, "#{pane_pid}").strip());
        return ProcessHandle.of(shell).orElseThrow().children()
                .filter(p -> p.info().command().orElse("").endsWith("java")).findFirst().orElseThrow().pid();
    }

    private ProcessHandle awaitInfertop() throws Exception {
        for (int attempt = 0; attempt < 100; attempt++) {
            try {
                return ProcessHandle.of(infertopPid()).orElseThrow();
            } catch (RuntimeException notYet) {
                Thread.sleep(100);
            }
        }
        return ProcessHandle.of(infertopPid()).orElseThrow();
    }

    /** Uprobes held by this infertop (other processes' probes do not count). */
    private long uprobes() throws Exception {
        String holder = "pid " + infertopPid() + " ";
        return run(Requirements.bpftool().toString(), "perf", "show").lines()
                .filter(l -> l.startsWith(holder) && (l.contains("uprobe") || l.contains("uretprobe"))).count();
    }

    @Test
    void keysDriveTheLiveViewAndQuitRestoresTheTerminal() throws Exception {
        start();
        String screen = awaitScreen("decode tokens/s and MUL_MAT rows", s -> s.contains("MUL_MAT")
                && Pattern.compile("decode +[1-9][0-9.]* tok/s").matcher(s).find(), 120);
        assertTrue(screen.contains("3:operator on"), screen);
        assertTrue(screen.contains("TTFT p50"), screen);
        Matcher pid = PID.matcher(screen);
        assertTrue(pid.find(), screen);
        long target = Long.parseLong(pid.group(1));
        ProcessHandle infertop = ProcessHandle.of(infertopPid()).orElseThrow();
        long withOperators = uprobes();

        // Operator layer off: its probes leave the kernel, the view says so.
        keys("3");
        screen = awaitScreen("operator off", s -> s.contains("3:operator off") && s.contains("no thread activity"), 20);
        long withoutOperators = uprobes();
        assertTrue(withoutOperators < withOperators && withoutOperators > 0,
                withOperators + " uprobes with the operator layer, " + withoutOperators + " without");
        keys("3");
        awaitScreen("operator on with rows again", s -> s.contains("3:operator on") && s.contains("MUL_MAT"), 20);
        assertEquals(withOperators, uprobes());

        // Sort by the next column after time share, p50: rows follow the column.
        keys(">");
        screen = awaitScreen("the p50 sort", s -> s.contains("P50ms▼"), 10);
        List<String> rows = tableRows(screen, "OP ");
        assertTrue(rows.size() >= 3, screen);
        double previous = Double.MAX_VALUE;
        for (String row : rows) {
            String p50 = row.substring(34, 41).strip();
            double value = p50.equals("-") ? 0 : Double.parseDouble(p50);
            assertTrue(value <= previous, "not sorted by p50:\n" + screen);
            previous = value;
        }

        // Filter: only MUL_MAT rows (the pattern also matches shapes, MUL_MAT's own name here).
        keys("/");
        keys("-l", "MUL_MAT");
        keys("Enter");
        screen = awaitScreen("the filter", s -> s.contains("[/MUL_MAT]"), 10);
        rows = tableRows(screen, "OP ");
        assertFalse(rows.isEmpty(), screen);
        for (String row : rows) {
            assertTrue(row.contains("MUL_MAT"), "filtered row without MUL_MAT:\n" + screen);
        }
        keys("Escape");

        // Resize: the view re-lays out to 80x24.
        run(tmux.toString(), "resize-window", "-t", session, "-x", "80", "-y", "24");
        screen = awaitScreen("the 80x24 layout", s -> lines(s).size() >= 24 && lines(s).get(23).startsWith("h help")
                && lines(s).stream().allMatch(l -> l.length() <= 80), 10);
        assertTrue(lines(screen).get(0).startsWith("infertop  pid " + target), screen);

        // Help lists the keys; Esc closes it.
        keys("h");
        // The layer toggles share one help line: "layer on/off: token graph operator moe".
        awaitScreen("help", s -> s.contains("HELP") && s.contains("layer on/off: token"), 10);
        keys("Escape");

        keys("q");
        screen = awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
        assertTrue(screen.contains("EXITED-0"), screen);
        assertFalse(screen.contains("1:token"), "the live view is still on screen after quit:\n" + screen);
        assertCleanExit(infertop);
        assertFalse(ProcessHandle.of(target).map(ProcessHandle::isAlive).orElse(false),
                "the launched llama-bench is still running");
    }

    @Test
    void theTargetExitingLeavesItsLastScreenUntilQ() throws Exception {
        start(60);
        ProcessHandle infertop = awaitInfertop();
        String screen = awaitScreen("the target exited state", s -> s.contains("TARGET EXITED"), 180);
        assertTrue(screen.contains("MUL_MAT"), "the last screen's rows are gone:\n" + screen);
        assertFalse(screen.contains("EXITED-"), "infertop left before q:\n" + screen);
        keys("q");
        screen = awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
        assertTrue(screen.contains("EXITED-0"), screen);
        assertCleanExit(infertop);
    }

    /**
     * --follow: infertop waits for a process by name, traces it, and when it exits waits for the next one. The
     * target is llama-bench under a name no other process has (a symlink: comm is the name exec'd).
     */
    @Test
    void followWaitsForEachNewProcessOfThatName() throws Exception {
        Path directory = Files.createTempDirectory("infertop-follow-");
        Path named = directory.resolve("ifollow-bench");
        Files.createSymbolicLink(named, bench);
        session = "infertop-it-follow-" + ProcessHandle.current().pid();
        run(tmux.toString(), "new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                "-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + launcher + " --follow ifollow-bench; echo EXITED-$?; sleep 600'");
        List<String> benchArgs = List.of(named.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0",
                "-pg", "32,32", "-r", "100000", "-t", "1");
        Process first = new ProcessBuilder(benchArgs).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Process second = null;
        ProcessHandle infertop = awaitInfertop();
        try {
            awaitScreen("the first process traced", s -> s.contains("pid " + first.pid() + " ifollow-bench")
                    && s.contains("MUL_MAT"), 120);
            first.destroy();
            first.waitFor();
            awaitScreen("waiting for the next one", s -> s.contains("TARGET EXITED, waiting for ifollow-bench"), 30);
            second = new ProcessBuilder(benchArgs).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            long secondPid = second.pid();
            String screen = awaitScreen("the second process traced", s -> s.contains("pid " + secondPid
                    + " ifollow-bench") && s.contains("running"), 120);
            assertFalse(screen.contains("TARGET EXITED"), screen);
            keys("q");
            screen = awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
            assertTrue(screen.contains("EXITED-0"), screen);
            assertTrue(second.isAlive(), "an attached process must never be stopped");
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.destroyForcibly();
                second.waitFor();
            }
            Files.deleteIfExists(named);
            Files.deleteIfExists(directory);
        }
        assertCleanExit(infertop);
    }

    @Test
    void aDroppedTerminalLeavesNothingBehind() throws Exception {
        start();
        String screen = awaitScreen("MUL_MAT rows", s -> s.contains("MUL_MAT"), 120);
        Matcher pid = PID.matcher(screen);
        assertTrue(pid.find(), screen);
        long target = Long.parseLong(pid.group(1));
        ProcessHandle infertop = ProcessHandle.of(infertopPid()).orElseThrow();
        run(tmux.toString(), "kill-session", "-t", session); // SIGHUP, like an SSH connection dropping
        session = null;
        long deadline = System.nanoTime() + 20_000_000_000L;
        while ((infertop.isAlive() || ProcessHandle.of(target).map(ProcessHandle::isAlive).orElse(false))
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertFalse(infertop.isAlive(), "infertop still running 20 s after its terminal dropped");
        assertFalse(ProcessHandle.of(target).map(ProcessHandle::isAlive).orElse(false),
                "llama-bench still running after the terminal dropped");
        assertCleanExit(infertop);
    }

    /**
     * This test's infertop has exited, and nothing of any infertop is left in the kernel. The message names
     * this test's pid, so that leftovers of another infertop on a shared machine are told apart.
     */
    private static void assertCleanExit(ProcessHandle infertop) throws Exception {
        infertop.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        try {
            LeakCheck.assertNothingLeft();
        } catch (AssertionError e) {
            throw new AssertionError("this test's infertop was pid " + infertop.pid() + " (exited); " + e.getMessage(), e);
        }
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return output;
    }
}
