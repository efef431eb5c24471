package dev.infertop.it;

import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters layer switched live, as a user does it: infertop in a tmux pane on a real llama-bench, key 6
 * opens the perf events (one fd per CPU per event in infertop's process) and key 6 again closes every one
 * of them; key c shows the panel with per-op counts; q leaves nothing behind.
 */
class CountersLiveIT extends LiveViewFixture {
    @Test
    void keySixOpensAndClosesThePerfEventsAndCShowsThePanel() throws Exception {
        // --budget 0: the operator layer's per-thread probes stay attached (no sample windows), so every perf
        // fd counted below is the counters layer's or a uprobe that does not change while this runs; and no clock
        // sampler, whose cpu-clock events (one per CPU) are perf fds too.
        startOnBench("infertop-counters-it-" + ProcessHandle.current().pid(), 120, 100000,
                "--counters", "software", "--budget", "0", "--op-sample-hz", "0");
        // "cost ~": the budget has its first estimate, so the uprobe hit cost it measures on a machine with no
        // cache yet (a counting perf uprobe, open for about a second) is measured and closed before counting.
        pane.awaitScreen("MUL_MAT rows, counters off, the budget's first estimate",
                s -> s.contains("MUL_MAT") && s.contains("6:counters off") && s.contains("cost ~"), 120);
        ProcessHandle infertop = pane.infertop();
        // Every perf fd infertop holds counts, uprobe links too; those are taken off the count (infertop may
        // start probing the fused-op calls at any time, when a graph's fused ops are not what its nodes suggest).
        assertEquals(0, counterFds(infertop.pid()), "no counter open before the key");

        pane.keys("6");
        pane.awaitScreen("counters on", s -> s.contains("6:counters on"), 20);
        assertEquals(4L * PerfCountersIT.onlineCpus(), counterFds(infertop.pid()), "one perf fd per CPU per event");

        pane.keys("c");
        String screen = pane.awaitScreen("the counters panel with a counted MUL_MAT row",
                s -> s.contains(" COUNTERS  layer on  set software: task-clock, page-faults, context-switches, "
                        + "cpu-migrations  line 64 B  reads ~") && rowStarting(s, "MUL_MAT") != null, 20);
        System.out.println("counters panel:\n" + screen);
        String matmul = rowStarting(screen, "MUL_MAT");
        String[] fields = matmul.strip().split(" +");
        assertTrue(Long.parseLong(fields[1]) > 0, "MUL_MAT groups counted: " + matmul);
        assertEquals("n/a", fields[7], "no verdict from software events: " + matmul);

        pane.keys("6");
        pane.awaitScreen("counters off", s -> s.contains("6:counters off"), 20);
        assertEquals(0, counterFds(infertop.pid()), "switched off: every counter's perf fd closed");

        pane.keys("q");
        pane.awaitScreen("the shell again", s -> s.contains("EXITED-0"), 20);
        infertop.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        LeakCheck.assertNothingLeft();
    }

    /** The perf fds of {@code pid} that are not uprobes (uprobe-multi links hold none): its counters (read until the uprobes hold still). */
    private static long counterFds(long pid) throws Exception {
        for (int attempt = 0; ; attempt++) {
            int uprobes = OperatorControlsIT.perfUprobesOwnedBy(pid).size();
            long fds = PerfCountersIT.perfFds(pid);
            if (OperatorControlsIT.perfUprobesOwnedBy(pid).size() == uprobes || attempt == 10) {
                return fds - uprobes;
            }
        }
    }

    private static String rowStarting(String screen, String prefix) {
        return screen.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
    }
}
