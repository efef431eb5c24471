package dev.infertop.session;

import dev.infertop.model.HitCost;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.ProbeRunStats;
import dev.infertop.model.BudgetStatus;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The budget fails closed: when its estimate source or a switch fails mid-run, the operator layer goes off (or, where
 * that fails too, its per-thread probes stay away), never back to tracing every graph; one notice says so and the
 * status (header, JSON budget.sampling) reads "failed".
 */
class OverheadBudgetTest {
    private static final long SECOND = 1_000_000_000L;

    /** What the budget did to the probes, in order. */
    static final class Probes implements OverheadBudget.OperatorProbes {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        volatile boolean on = true;
        volatile boolean paused;
        volatile boolean offFails;

        @Override
        public boolean operatorOn() {
            return on;
        }

        @Override
        public boolean arrivalsPaused() {
            return paused;
        }

        @Override
        public void pauseArrivals(long graceMs) {
            calls.add("pause");
            paused = true;
        }

        @Override
        public void resumeArrivals() {
            calls.add("resume");
            paused = false;
        }

        /** Graphs begun while the probes are attached: one per read, as a busy target's. */
        final java.util.concurrent.atomic.AtomicLong traced = new java.util.concurrent.atomic.AtomicLong();
        volatile boolean graphsBegin = true;

        @Override
        public long graphsTraced() {
            return graphsBegin && !paused ? traced.incrementAndGet() : traced.get();
        }

        @Override
        public void operatorOff(String why) throws BpfException {
            calls.add("off: " + why);
            if (offFails) {
                throw new BpfException("detach failed");
            }
            on = false;
        }
    }

    /**
     * Readings of a 2-thread target over a 0.6 % budget (BudgetPlanTest's window: 8,000 hits a second, 7,400 of
     * them arrivals, 1 µs each): the first phase costs more than the budget, so the per-thread probes go away.
     * The reading numbered {@code failAt} (0: the first) throws {@code failure}.
     */
    static class Readings implements OverheadBudget.Readings {
        private final int failAt;
        private final Exception failure;
        volatile boolean targetAlive = true;
        private int read;

        Readings(int failAt, Exception failure) {
            this.failAt = failAt;
            this.failure = failure;
        }

        @Override
        public OverheadBudget.Reading read() throws IOException {
            int n = read++;
            if (n == failAt) {
                if (failure instanceof IOException io) {
                    throw io;
                }
                throw (RuntimeException) failure;
            }
            // The sched layer's tracepoint programs: 10,000 runs a second, 4 ms of BPF time (400 ns a run).
            return new OverheadBudget.Reading(n * SECOND, new ProbeRunStats.Sample(n * 8_000L, n * 7_400L,
                    n * 2_000_000L + n * 4_000_000L, n * 10_000L, n * 4_000_000L), n * 2 * SECOND, n * 10_000_000L,
                    n * SECOND);
        }

        @Override
        public boolean targetAlive() {
            return targetAlive;
        }

        @Override
        public BudgetPlan plan(double budgetPercent) {
            return new BudgetPlan(budgetPercent, 1000, "");
        }

        @Override
        public void close() {}
    }

    private final BlockingQueue<String> notices = new LinkedBlockingQueue<>();

    private OverheadBudget start(Probes probes, Readings readings) {
        return OverheadBudget.start(0.6, probes, readings, notices::add);
    }

    @Test
    void theStatusCarriesTheHitCostItsEstimateUsedAndTheMeasuredTracepointRunTime() throws Exception {
        Probes probes = new Probes();
        try (OverheadBudget budget = start(probes, new Readings(-1, null))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!budget.status().measured() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            BudgetStatus status = budget.status();
            assertTrue(status.measured(), "no estimate within 10 s");
            assertEquals(new HitCost(1000, true, 400.0), status.hitCost());
        }
    }

    /** --budget 0 and a run that ends before the budget's first reading: its status already says every graph. */
    @Test
    void budgetZeroSaysEveryGraphBeforeTheFirstReading() throws Exception {
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        Readings blocked = new Readings(-1, null) {
            @Override
            public BudgetPlan plan(double budgetPercent) {
                try {
                    never.await(); // the hit cost still being measured: no phase read yet
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.plan(budgetPercent);
            }
        };
        try (OverheadBudget budget = OverheadBudget.start(0, new Probes(), blocked, notices::add)) {
            assertEquals("every graph", budget.status().sampling(), budget.status().toString());
            assertEquals(1, budget.status().arrivalShare());
        }
        try (OverheadBudget budget = OverheadBudget.start(0.6, new Probes(), new Readings(-1, null) {
            @Override
            public BudgetPlan plan(double budgetPercent) {
                try {
                    never.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.plan(budgetPercent);
            }
        }, notices::add)) {
            assertEquals("measuring", budget.status().sampling(), "a limit: the first window is undecided");
        }
    }

    /**
     * A long graph (a prompt under load) began before the first window and outlasted it: the window traced no
     * graph, so it stays open until one begins, then ends (its last graph finishes before the probes go).
     */
    @Test
    void aWindowInWhichNoGraphBeganStaysOpenUntilOneDoes() throws Exception {
        Probes probes = new Probes();
        probes.graphsBegin = false;
        try (OverheadBudget budget = start(probes, new Readings(-1, null))) {
            Thread.sleep(BudgetPlan.FIRST_ON_MS + 700);
            assertEquals(List.of(), probes.calls, "no pause while no graph began in the window");
            probes.graphsBegin = true;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (probes.calls.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals("pause", probes.calls.isEmpty() ? "none" : probes.calls.getFirst(),
                    "the window ends once a graph began in it");
        }
    }

    @Test
    void aFailingEstimateMidRunSwitchesTheOperatorLayerOffInsteadOfTracingEveryGraph() throws Exception {
        Probes probes = new Probes();
        // Reading 0 starts the first window, 1 ends it (over the budget: the probes go away), 2 ends the gap.
        try (OverheadBudget budget = start(probes, new Readings(2, new IllegalStateException("run stats unreadable")))) {
            String notice = notices.poll(10, TimeUnit.SECONDS);
            assertEquals("infertop: the overhead budget failed (run stats unreadable): operator layer switched off;"
                    + " 3 or SIGUSR2 switches it on again, unsampled", notice);
            assertEquals(List.of("pause", "off: the overhead budget failed"), probes.calls,
                    "the gap is not ended by a resume: the layer goes off");
            assertFalse(probes.on);
            assertTrue(budget.failed(), "--op-when must not switch the layer back on");
            BudgetStatus status = budget.status();
            assertTrue(status.failed());
            assertEquals("failed: run stats unreadable; operator layer switched off", status.sampling());
            assertEquals(0, status.arrivalShare());
            assertFalse(status.measured(), "no estimate is shown for a cost nobody measures any more");
            assertEquals("budget 0.60% · failed: run stats unreadable; operator layer switched off", status.headerText());
            assertEquals("cost: unknown, budget failed", status.costText());
            assertNull(notices.poll(200, TimeUnit.MILLISECONDS), "said once");
        }
    }

    @Test
    void aFailureBeforeTheFirstReadingFailsClosedAtOnce() throws Exception {
        Probes probes = new Probes();
        try (OverheadBudget budget = start(probes, new Readings(0, new ArithmeticException()))) {
            String notice = notices.poll(10, TimeUnit.SECONDS);
            assertNotNull(notice);
            assertTrue(notice.startsWith("infertop: the overhead budget failed (ArithmeticException): operator layer"
                    + " switched off"), notice);
            assertEquals(List.of("off: the overhead budget failed"), probes.calls);
            assertEquals("failed: ArithmeticException; operator layer switched off", budget.status().sampling());
        }
    }

    @Test
    void whereTheLayerCannotBeSwitchedOffItsPerThreadProbesStayAway() throws Exception {
        Probes probes = new Probes();
        probes.offFails = true;
        try (OverheadBudget budget = start(probes, new Readings(0, new IllegalStateException("gone")))) {
            assertNotNull(notices.poll(10, TimeUnit.SECONDS));
            assertEquals(List.of("off: the overhead budget failed", "pause"), probes.calls);
            assertTrue(probes.paused);
            assertEquals("failed: gone; operator layer's per-thread probes detached, cannot switch it off: detach"
                    + " failed", budget.status().sampling());
        }
    }

    @Test
    void aReadingThatFailsBecauseTheTargetIsGoneIsNoFailure() throws Exception {
        Probes probes = new Probes();
        Readings readings = new Readings(0, new IOException("/proc/4242/stat: no such file"));
        readings.targetAlive = false;
        try (OverheadBudget budget = start(probes, readings)) {
            assertNull(notices.poll(500, TimeUnit.MILLISECONDS));
            assertEquals(List.of(), probes.calls);
            assertFalse(budget.failed());
        }
    }

    @Test
    void aReadingThatFailsWhileTheTargetRunsFailsClosed() throws Exception {
        Probes probes = new Probes();
        try (OverheadBudget budget = start(probes, new Readings(0, new IOException("unexpected /proc/stat: cpu")))) {
            assertNotNull(notices.poll(10, TimeUnit.SECONDS));
            assertEquals(List.of("off: the overhead budget failed"), probes.calls);
            assertTrue(budget.failed());
        }
    }
}
