package dev.infertop.it;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The full-screen view as a user gets it: infertop in a tmux pane (a real terminal) on a real llama-bench,
 * driven with send-keys and read back with capture-pane. Checks tokens/s and operator rows appear, the
 * operator layer's key really detaches and re-attaches its probes ({@code bpftool perf show}), sort and filter
 * keys change the rows, a resize re-lays out, and q restores the terminal and leaves nothing behind; a
 * dropped terminal (the pane killed: SIGHUP) leaves nothing behind either.
 */
class LiveMonitorIT extends LiveViewFixture {
    private static final Pattern PID = Pattern.compile("pid (\\d+) llama-bench");

    /** Starts infertop on a long llama-bench in a detached 100x30 tmux pane; the shell reports its exit status. */
    private void start() throws Exception {
        start(100000);
    }

    private void start(int repetitions) throws Exception {
        // --budget 0: the operator layer's per-thread probes stay attached (no sample windows), so the uprobe
        // counts compared across the layer's switches below are the layers' own.
        startOnBench("infertop-it-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000, 100,
                repetitions, "--budget", "0");
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

    private long infertopPid() throws Exception {
        return pane.infertop().pid();
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

    /** Uprobes held by this infertop, as perf events or in uprobe-multi links (other processes' probes do not count). */
    private long uprobes() throws Exception {
        String holder = "pid " + infertopPid() + " ";
        return Processes.output(Requirements.bpftool().toString(), "perf", "show").lines()
                .filter(l -> l.startsWith(holder) && (l.contains("uprobe") || l.contains("uretprobe"))).count()
                + UprobeMultiLinks.heldBy(infertopPid()).stream().mapToLong(link -> link.fileOffsets().size()).sum();
    }

    /**
     * The lane rows whose last second (the strip's last 20 cells) holds cells the clock samples named (lower case)
     * and whose op now is the samples' ({@code ~}).
     */
    private static long sampledLanes(String screen) {
        return lines(screen).stream().filter(line -> line.length() > 50 && line.charAt(29) == '|')
                .filter(line -> line.substring(8, 29).contains("% ~"))
                .filter(line -> line.substring(Math.max(30, line.stripTrailing().length() - 20)).chars()
                        .anyMatch(c -> "maneco".indexOf(c) >= 0))
                .count();
    }

    /**
     * With the default options the budget traces the operator layer in short windows: between them the op table
     * is the last window's (and says how old), while the lanes are current: the clock samples fill their newest
     * cells and name each decode thread's op now, and NOW% is this interval's.
     */
    @Test
    void betweenWindowsTheSamplesKeepTheLanesCurrent() throws Exception {
        startOnBench("infertop-it-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000, 100, 100000);
        String screen = pane.awaitScreen("a held window with lanes the samples filled", s -> s.contains(" s ago")
                && sampledLanes(s) >= 2, 120);
        assertTrue(screen.contains("NOW%"), screen);
        assertTrue(tableRows(screen, "OP ").stream().anyMatch(row -> row.startsWith("MUL_MAT")
                && Pattern.compile("MUL_MAT +\\S+ +\\S+ +[0-9]+\\.[0-9] ").matcher(row).find()),
                "MUL_MAT's NOW% from this interval's samples:\n" + screen);
    }

    @Test
    void keysDriveTheLiveViewAndQuitRestoresTheTerminal() throws Exception {
        start();
        String screen = pane.awaitScreen("decode tokens/s and MUL_MAT rows", s -> s.contains("MUL_MAT")
                && Pattern.compile("decode +[1-9][0-9.]* tok/s").matcher(s).find(), 120);
        assertTrue(screen.contains("3:operator on"), screen);
        assertTrue(screen.contains("TTFT p50"), screen);
        Matcher pid = PID.matcher(screen);
        assertTrue(pid.find(), screen);
        long target = Long.parseLong(pid.group(1));
        ProcessHandle infertop = ProcessHandle.of(infertopPid()).orElseThrow();
        long withOperators = uprobes();

        // Operator layer off: its probes leave the kernel, the view says so.
        pane.keys("3");
        screen = pane.awaitScreen("operator off", s -> s.contains("3:operator off")
                && s.contains("no thread activity"), 20);
        long withoutOperators = uprobes();
        assertTrue(withoutOperators < withOperators && withoutOperators > 0,
                withOperators + " uprobes with the operator layer, " + withoutOperators + " without");
        pane.keys("3");
        pane.awaitScreen("operator on with rows again", s -> s.contains("3:operator on") && s.contains("MUL_MAT"), 20);
        assertEquals(withOperators, uprobes());

        // Sort by the column after the samples' share (NOW%, next to time share), p50: rows follow the column.
        pane.keys(">");
        pane.awaitScreen("the NOW% sort", s -> s.contains("NOW%▼"), 10);
        pane.keys(">");
        screen = pane.awaitScreen("the p50 sort", s -> s.contains("P50ms▼"), 10);
        List<String> rows = tableRows(screen, "OP ");
        assertTrue(rows.size() >= 3, screen);
        double previous = Double.MAX_VALUE;
        for (String row : rows) {
            String p50 = row.substring(41, 48).strip();
            double value = p50.equals("-") ? 0 : Double.parseDouble(p50);
            assertTrue(value <= previous, "not sorted by p50:\n" + screen);
            previous = value;
        }

        // Filter: only MUL_MAT rows (the pattern also matches shapes, MUL_MAT's own name here).
        pane.keys("/");
        pane.keys("-l", "MUL_MAT");
        pane.keys("Enter");
        screen = pane.awaitScreen("the filter", s -> s.contains("[/MUL_MAT]"), 10);
        rows = tableRows(screen, "OP ");
        assertFalse(rows.isEmpty(), screen);
        for (String row : rows) {
            assertTrue(row.contains("MUL_MAT"), "filtered row without MUL_MAT:\n" + screen);
        }
        pane.keys("Escape");

        // Resize: the view re-lays out to 80x24, the footer on the last line: the key hints, or a notice said
        // in front of them for a few seconds (records lost on a machine whose cores llama-bench keeps busy): a
        // sentence, where no table row or plot line starts lower-case. The header must be on the first line as
        // well: right after the resize tmux shows the bottom 24 lines of the old 50-line frame cut to 80 columns,
        // whose last line is the old footer, until infertop has drawn the new layout.
        pane.resize(80, 24);
        screen = pane.awaitScreen("the 80x24 layout", s -> lines(s).size() >= 24
                && lines(s).get(0).startsWith("infertop  pid " + target)
                && (lines(s).get(23).startsWith("h help") || lines(s).get(23).matches("[a-z].*"))
                && lines(s).stream().allMatch(l -> l.length() <= 80), 10);
        assertTrue(lines(screen).get(0).startsWith("infertop  pid " + target), screen);

        // Help lists the keys; Esc closes it.
        pane.keys("h");
        // The layer toggles share one help line: "layer on/off: token graph operator moe".
        pane.awaitScreen("help", s -> s.contains("HELP") && s.contains("layer on/off: token"), 10);
        pane.keys("Escape");

        pane.keys("q");
        screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
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
        String screen = pane.awaitScreen("the target exited state", s -> s.contains("TARGET EXITED"), 180);
        assertTrue(screen.contains("MUL_MAT"), "the last screen's rows are gone:\n" + screen);
        assertFalse(screen.contains("EXITED-"), "infertop left before q:\n" + screen);
        pane.keys("q");
        screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
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
        pane = TmuxPane.start("infertop-it-follow-" + ProcessHandle.current().pid(), 100, 30,
                "--follow", "ifollow-bench");
        List<String> benchArgs = List.of(named.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0",
                "-pg", "32,32", "-r", "100000", "-t", "1");
        Process first = new ProcessBuilder(benchArgs).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Process second = null;
        ProcessHandle infertop = awaitInfertop();
        try {
            pane.awaitScreen("the first process traced", s -> s.contains("pid " + first.pid() + " ifollow-bench")
                    && s.contains("MUL_MAT"), 120);
            first.destroy();
            first.waitFor();
            pane.awaitScreen("waiting for the next one",
                    s -> s.contains("TARGET EXITED, waiting for ifollow-bench"), 30);
            second = new ProcessBuilder(benchArgs).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            long secondPid = second.pid();
            String screen = pane.awaitScreen("the second process traced", s -> s.contains("pid " + secondPid
                    + " ifollow-bench") && s.contains("running"), 120);
            assertFalse(screen.contains("TARGET EXITED"), screen);
            pane.keys("q");
            screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
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
        String screen = pane.awaitScreen("MUL_MAT rows", s -> s.contains("MUL_MAT"), 120);
        Matcher pid = PID.matcher(screen);
        assertTrue(pid.find(), screen);
        long target = Long.parseLong(pid.group(1));
        ProcessHandle infertop = ProcessHandle.of(infertopPid()).orElseThrow();
        pane.close(); // SIGHUP, like an SSH connection dropping
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
     * An Error in the live view's session (INFERTOP_TEST_INJECT, session.InjectedFault: on the collector's thread
     * at the third interval) restores the terminal as q does: the alternate screen left, the tty cooked again
     * (icanon, echo), the one line about it readable on the shell's screen, exit status 70, nothing left behind.
     */
    @Test
    void anErrorRestoresTheTerminalAndLeavesOneLine() throws Exception {
        String launcher = Path.of("src/scripts/infertop").toAbsolutePath().toString();
        String command = "INFERTOP_TEST_INJECT=oom-after-ticks:3 " + launcher + " -- " + bench + " -m " + tinyModel
                + " -p 0 -n 0 -pg 32,32 -r 100000 -t 2; s=$?; stty -a | tr \" \" \"\\n\""
                + " | grep -x -e icanon -e -icanon -e echo -e -echo | tr \"\\n\" \" \"; (exit $s)";
        pane = TmuxPane.startShell("infertop-it-err-" + ProcessHandle.current().pid(), 100, 30,
                Path.of("").toAbsolutePath(), command);
        pane.keepSize();
        ProcessHandle infertop = awaitInfertop();
        String screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 90);
        assertTrue(screen.contains("icanon echo EXITED-70"), "cooked tty, status 70:\n" + screen);
        assertEquals("0", pane.paneFormat("#{alternate_on}"), "still on the alternate screen:\n" + screen);
        assertEquals("1", pane.paneFormat("#{cursor_flag}"), "the cursor is hidden:\n" + screen);
        assertEquals(1, lines(screen).stream().filter(l -> l.startsWith(
                "infertop: fatal error: java.lang.OutOfMemoryError: injected by INFERTOP_TEST_INJECT")).count(), screen);
        assertFalse(screen.contains("at dev.infertop"), screen);
        assertFalse(screen.contains("1:token"), "the live view is still on screen:\n" + screen);
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
}
