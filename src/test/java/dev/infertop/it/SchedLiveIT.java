package dev.infertop.it;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The sched layer in the live view (a 100x30 tmux pane): key t shows the thread-states panel; key 5 really
 * detaches its two tracepoint links and attaches them again; q leaves nothing behind.
 */
class SchedLiveIT extends LiveViewFixture {
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
        startOnBench("infertop-sched-it-" + ProcessHandle.current().pid(), 100, 100000,
                "--layers", "token,operator,sched");
        pane.awaitScreen("the sched layer on", s -> s.contains("5:sched on"), 120);
        assertEquals(2, awaitLinks(before, 2).size());

        pane.keys("t");
        String screen = pane.awaitScreen("the thread-states panel with threads", s -> s.contains("THREAD STATES")
                && s.contains("RUN%")
                && s.lines().anyMatch(l -> l.matches("^  \\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .*")), 30);
        assertTrue(screen.contains("rec/s"), screen);

        pane.keys("5");
        screen = pane.awaitScreen("the sched layer off", s -> s.contains("5:sched off"), 20);
        awaitLinks(before, 0);
        pane.awaitScreen("the panel saying why", s -> s.contains("sched layer off: switched off live"), 20);

        pane.keys("5");
        pane.awaitScreen("the sched layer on again", s -> s.contains("5:sched on"), 20);
        assertEquals(2, awaitLinks(before, 2).size());

        pane.keys("q");
        screen = pane.awaitScreen("the shell again", s -> s.contains("EXITED-"), 30);
        assertTrue(screen.contains("EXITED-0"), screen);
        awaitLinks(before, 0);
        LeakCheck.assertNothingLeft();
    }
}
