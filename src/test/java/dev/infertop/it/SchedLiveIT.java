package dev.infertop.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The sched layer in the live view (a 100x30 tmux pane): key t shows the thread-states panel; key 5 really
 * detaches its two tracepoint links and attaches them again; q leaves nothing behind.
 */
class SchedLiveIT {
    private static Path bench;
    private static Path tinyModel;
    private static Path tmux;
    private static Path launcher;
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

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return output;
    }

    private String awaitScreen(String what, Predicate<String> condition, int timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = run(tmux.toString(), "capture-pane", "-p", "-t", session);
            if (condition.test(screen)) {
                return screen;
            }
            Thread.sleep(250);
        }
        fail("screen never showed " + what + " within " + timeoutSeconds + " s; last screen:\n" + screen);
        return screen;
    }

    private Set<String> awaitLinks(Set<String> before, int count) throws Exception {
        Set<String> now = Set.of();
        for (int attempt = 0; attempt < 80; attempt++) {
            now = new java.util.TreeSet<>(SchedInterferenceIT.tracingLinks());
            now.removeAll(before);
            if (now.size() == count) {
                return now;
            }
            Thread.sleep(250);
        }
        fail("expected " + count + " new tp_btf links, saw " + now);
        return now;
    }

    @Test
    void keyFiveDetachesAndReattachesTheTracepointsAndKeyTShowsThePanel() throws Exception {
        Set<String> before = SchedInterferenceIT.tracingLinks();
        session = "infertop-sched-it-" + ProcessHandle.current().pid();
        String command = String.join(" ", List.of(launcher.toString(), "--layers", "token,operator,sched", "--",
                bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32", "-r", "100000",
                "-t", "2"));
        run(tmux.toString(), "new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                "-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + command + "; echo EXITED-$?; sleep 600'");
        run(tmux.toString(), "set-option", "-t", session, "window-size", "manual");
        awaitScreen("the sched layer on", s -> s.contains("5:sched on"), 120);
        assertEquals(2, awaitLinks(before, 2).size());

        run(tmux.toString(), "send-keys", "-t", session, "t");
        String screen = awaitScreen("the thread-states panel with threads", s -> s.contains("THREAD STATES")
                && s.contains("RUN%") && s.lines().anyMatch(l -> l.matches("^  \\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .*")), 30);
        assertTrue(screen.contains("rec/s"), screen);

        run(tmux.toString(), "send-keys", "-t", session, "5");
        screen = awaitScreen("the sched layer off", s -> s.contains("5:sched off"), 20);
        awaitLinks(before, 0);
        awaitScreen("the panel saying why", s -> s.contains("sched layer off: switched off live"), 20);

        run(tmux.toString(), "send-keys", "-t", session, "5");
        awaitScreen("the sched layer on again", s -> s.contains("5:sched on"), 20);
        assertEquals(2, awaitLinks(before, 2).size());

        run(tmux.toString(), "send-keys", "-t", session, "q");
        screen = awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
        assertTrue(screen.contains("EXITED-0"), screen);
        awaitLinks(before, 0);
        LeakCheck.assertNothingLeft();
    }
}
