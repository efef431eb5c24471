package dev.infertop.ffi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The start boost's readings, and the rule that keeps every child process off it. */
class OwnPriorityTest {
    @Test
    void readsTheNiceValueAfterACommandNameWithSpacesAndParentheses(@TempDir Path dir) throws IOException {
        Path stat = dir.resolve("stat");
        // A thread may name itself anything up to 15 bytes: ") 0 0 0" must not shift the fields.
        Files.writeString(stat, "4242 (C1 ) 0 0 0 x) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 30 -7 14 0 "
                + "1234 0 0\n");
        assertEquals(-7, OwnPriority.niceOf(stat));
    }

    @Test
    void aStatItCannotReadCountsAsNiceZero(@TempDir Path dir) {
        assertEquals(0, OwnPriority.niceOf(dir.resolve("missing")));
    }

    @Test
    void readsTheAutogroupNiceValue() {
        assertEquals(0, OwnPriority.autogroupNice("/autogroup-1406 nice 0\n"));
        assertEquals(-10, OwnPriority.autogroupNice("/autogroup-7 nice -10"));
        assertThrows(IllegalArgumentException.class, () -> OwnPriority.autogroupNice("garbage"));
        assertThrows(IllegalArgumentException.class, () -> OwnPriority.autogroupNice("/autogroup-7 weight 5"));
    }

    @Test
    void thisThreadsNiceValueIsReadFromProc() throws IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        int expected = Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[16]);
        assertEquals(expected, OwnPriority.niceOf(Path.of("/proc/thread-self/stat")));
    }

    /**
     * During the start boost (an attach's, before its first screen: when the calibration sandbox runs the
     * target's library), a child started through OwnPriority.start runs at the nice value infertop was given, not
     * at the boost its starting thread had. As root (CI) the boost is real; without CAP_SYS_NICE it is refused and
     * the check below says so instead of passing on nothing.
     */
    @Test
    void aChildStartedDuringTheStartBoostRunsAtTheGivenPriority(@TempDir Path dir) throws Exception {
        Path self = Path.of("/proc/thread-self/stat");
        int given = OwnPriority.niceOf(self);
        OwnPriority.raiseForStart();
        try {
            int raised = OwnPriority.niceOf(self);
            if (LibC.geteuid() == 0 && given <= 0) {
                assertEquals(Math.max(-20, given - 10), raised, "root: the start boost is on");
            } else {
                assertEquals(given, raised, "no CAP_SYS_NICE (or a positive nice): no boost to leak");
            }
            Process child = OwnPriority.start(new ProcessBuilder("cat", "/proc/self/stat"));
            Path childStat = dir.resolve("stat");
            Files.write(childStat, child.getInputStream().readAllBytes());
            assertEquals(0, child.waitFor());
            assertEquals(given, OwnPriority.niceOf(childStat), "the child's nice value");
            assertEquals(given, OwnPriority.niceOf(self), "infertop's own threads, back at the given value");
        } finally {
            OwnPriority.backToGiven();
        }
    }

    /**
     * A quit (q, a signal) raises every thread, and a thread started after it (the detach's) inherits the raise:
     * the detach must not run at the nice value infertop yields to the engine with. A child started then still
     * runs at the given value, and nothing after the quit (the target's model mapped late) yields again.
     */
    @Test
    void aQuitRaisesEveryThreadAndTheThreadsStartedAfterIt(@TempDir Path dir) throws Exception {
        Path self = Path.of("/proc/thread-self/stat");
        int given = OwnPriority.niceOf(self);
        int[] idleThread = new int[1];
        java.util.concurrent.CountDownLatch raised = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(1);
        Thread before = Thread.ofPlatform().start(() -> { // started before the quit: raised from outside
            try {
                raised.await();
                idleThread[0] = OwnPriority.niceOf(Path.of("/proc/thread-self/stat"));
                read.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        OwnPriority.raiseForQuit();
        try {
            raised.countDown();
            read.await();
            before.join();
            int[] newThread = new int[1];
            Thread after = Thread.ofPlatform().start(() ->
                    newThread[0] = OwnPriority.niceOf(Path.of("/proc/thread-self/stat")));
            after.join();
            OwnPriority.targetStarted(); // must not yield again
            int expected = LibC.geteuid() == 0 && given <= 0 ? Math.max(-20, given - 10) : given;
            assertEquals(expected, OwnPriority.niceOf(self), "the quitting thread");
            assertEquals(expected, idleThread[0], "a thread that was already running");
            assertEquals(expected, newThread[0], "a thread started after the quit");
            Process child = OwnPriority.start(new ProcessBuilder("cat", "/proc/self/stat"));
            Path childStat = dir.resolve("stat");
            Files.write(childStat, child.getInputStream().readAllBytes());
            assertEquals(0, child.waitFor());
            assertEquals(given, OwnPriority.niceOf(childStat), "a child's nice value");
        } finally {
            OwnPriority.backToGiven();
        }
        assertEquals(given, OwnPriority.niceOf(self), "back at the given value");
    }

    /**
     * A child inherits the nice value of the thread that starts it: every process infertop starts goes through
     * OwnPriority.start, which ends the start boost first (the launched target and the sandbox that runs the
     * target's library must never run above the priority infertop was given).
     */
    @Test
    void everyChildProcessIsStartedThroughOwnPriority() throws IOException {
        List<String> offenders = new ArrayList<>();
        try (Stream<Path> sources = Files.walk(Path.of("src/main/java"))) {
            for (Path source : sources.filter(p -> p.toString().endsWith(".java")).toList()) {
                String text = Files.readString(source);
                if (source.endsWith("OwnPriority.java")) {
                    continue;
                }
                if (text.contains("Runtime.getRuntime().exec") || text.contains("ProcessBuilder")
                        && count(text, "new ProcessBuilder(") > count(text, "OwnPriority.start(")) {
                    offenders.add(source.toString());
                }
            }
        }
        assertTrue(offenders.isEmpty(), "processes started without OwnPriority.start: " + offenders);
    }

    private static int count(String text, String what) {
        int count = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            count++;
        }
        return count;
    }
}
