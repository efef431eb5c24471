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
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The counters layer switched live, as a user does it: infertop in a tmux pane on a real llama-bench, key 6
 * opens the perf events (one fd per CPU per event in infertop's process) and key 6 again closes every one
 * of them; key c shows the panel with per-op counts; q leaves nothing behind.
 */
class CountersLiveIT {
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

    @Test
    void keySixOpensAndClosesThePerfEventsAndCShowsThePanel() throws Exception {
        session = "infertop-counters-it-" + ProcessHandle.current().pid();
        String command = String.join(" ", List.of(launcher.toString(), "--counters", "software", "--",
                bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0", "-pg", "32,32", "-r", "100000",
                "-t", "2"));
        run(tmux.toString(), "new-session", "-d", "-s", session, "-x", "120", "-y", "30",
                "-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + command + "; echo EXITED-$?; sleep 600'");
        run(tmux.toString(), "set-option", "-t", session, "window-size", "manual");
        awaitScreen("MUL_MAT rows, counters off", s -> s.contains("MUL_MAT") && s.contains("6:counters off"), 120);
        ProcessHandle infertop = infertopProcess();
        long before = perfFds(infertop.pid());

        run(tmux.toString(), "send-keys", "-t", session, "6");
        awaitScreen("counters on", s -> s.contains("6:counters on"), 20);
        assertEquals(before + 4L * onlineCpus(), perfFds(infertop.pid()), "one perf fd per CPU per event");

        run(tmux.toString(), "send-keys", "-t", session, "c");
        String screen = awaitScreen("the counters panel with a counted MUL_MAT row",
                s -> s.contains(" COUNTERS  layer on  set software: task-clock, page-faults, context-switches, "
                        + "cpu-migrations  line 64 B  reads ~") && rowStarting(s, "MUL_MAT") != null, 20);
        System.out.println("counters panel:\n" + screen);
        String matmul = rowStarting(screen, "MUL_MAT");
        String[] fields = matmul.strip().split(" +");
        assertTrue(Long.parseLong(fields[1]) > 0, "MUL_MAT groups counted: " + matmul);
        assertEquals("n/a", fields[7], "no verdict from software events: " + matmul);

        run(tmux.toString(), "send-keys", "-t", session, "6");
        awaitScreen("counters off", s -> s.contains("6:counters off"), 20);
        assertEquals(before, perfFds(infertop.pid()), "switched off: every perf fd closed");

        run(tmux.toString(), "send-keys", "-t", session, "q");
        awaitScreen("the shell again", s -> s.contains("EXITED-0"), 20);
        infertop.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        LeakCheck.assertNothingLeft();
    }

    private static String rowStarting(String screen, String prefix) {
        return screen.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
    }

    private static int onlineCpus() throws IOException {
        String text = Files.readString(Path.of("/sys/devices/system/cpu/online")).strip();
        int count = 0;
        for (String part : text.split(",")) {
            String[] range = part.split("-");
            count += range.length == 1 ? 1 : Integer.parseInt(range[1]) - Integer.parseInt(range[0]) + 1;
        }
        return count;
    }

    /** perf event fds infertop holds that are not uprobe links: its uprobes do not change while this runs. */
    private static long perfFds(long pid) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().equals("anon_inode:[perf_event]");
                } catch (IOException gone) {
                    return false;
                }
            }).count();
        }
    }

    private ProcessHandle infertopProcess() throws Exception {
        long shell = Long.parseLong(run(tmux.toString(), "display-message", "-p", "-t", session, "#{pane_pid}").strip());
        return ProcessHandle.of(shell).orElseThrow().children()
                .filter(p -> p.info().command().orElse("").endsWith("java")).findFirst().orElseThrow();
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

    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(new ArrayList<>(List.of(command))).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return output;
    }
}
