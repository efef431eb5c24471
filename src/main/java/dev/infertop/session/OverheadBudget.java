package dev.infertop.session;

import dev.infertop.bpf.BpfObject;
import dev.infertop.model.HitCost;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.OperatorKernelSide;
import dev.infertop.bpf.ProbeRunStats;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.machine.CeilingCache;
import dev.infertop.machine.UprobeHitCost;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.Layer;
import dev.infertop.process.MachineIdleTime;
import dev.infertop.process.ProcessCpuTime;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Keeps infertop's estimated cost under {@code --budget}: a thread of its own (attaching and detaching probes
 * is slow in the kernel, which must not hold up the collector) that alternates sample windows, with the
 * operator layer's per-thread probes attached, and gaps without them, each as long as {@link BudgetPlan} says.
 * What it costs comes from the kernel's count of each program's runs and run time ({@link ProbeRunStats}), the
 * cost of one uprobe hit measured on this machine ({@link dev.infertop.machine.UprobeCostProbe}, cached), and
 * CPU times from /proc ({@link ProcessCpuTime}, and {@link MachineIdleTime} for whether infertop's own CPU took a
 * core from the target). With budget 0 it only estimates.
 * <p>
 * It fails closed: where a reading or a switch fails mid-run, the cost is no longer known, so the operator layer
 * goes off (its probes detached; where even that fails, its per-thread probes stay away) rather than trace every
 * graph with nothing watching the cost; one line says so, and the status (header, JSON {@code budget.sampling})
 * reads "failed". The user may switch the layer on again (3, SIGUSR2); --op-when no longer does.
 */
final class OverheadBudget implements AutoCloseable {
    /** After a window ends, the graph in flight finishes with its arrivals before the probes go. */
    static final long GRACE_MS = 100;
    /**
     * The longest a window is kept open past its length for a graph to begin in it: one that began none (a
     * long graph, a prompt under load, that started before the window and outlasted it) traced nothing, and the
     * next window may be half a minute away. Waiting costs the traps of the rest of the graph in flight.
     */
    static final long MAX_AWAIT_GRAPH_MS = 10_000;
    /** How often the graph count is read while a window waits for a graph to begin. */
    static final long AWAIT_GRAPH_POLL_MS = 10;
    /** Where a hit's cost cannot be measured: the documented default ({@link dev.infertop.model.HitCost#DEFAULT}). */
    static final double ASSUMED_HIT_NS = HitCost.DEFAULT.nsPerHit();
    /**
     * With the operator layer off there are no windows to decide: the estimate is only shown, and read this
     * seldom: a reading (every program's run stats, three clocks, /proc/stat) is dear in the minutes this thread
     * runs interpreted (measurements.md, "Where every graph's cost goes").
     */
    static final long OPERATOR_OFF_PHASE_MS = 5000;
    /** Each phase's figures on stderr (INFERTOP_DEBUG, as the start's timeline). */
    private static final boolean DEBUG = System.getenv("INFERTOP_DEBUG") != null;

    /** What a phase is measured with: the probes' run counts and three clocks. */
    interface Readings extends AutoCloseable {
        /** The counts and clocks now; IOException when the target is gone (or /proc is not as expected). */
        Reading read() throws IOException;

        /** Whether the target is still there (an IOException from a gone target is no failure). */
        boolean targetAlive();

        /** The plan for {@code budgetPercent} with what one uprobe hit costs here (measured once, cached). */
        BudgetPlan plan(double budgetPercent);

        @Override
        void close();
    }

    /** What the budget switches: the operator layer's per-thread probes ({@link ProbeSet}'s). */
    interface OperatorProbes {
        boolean operatorOn();

        boolean arrivalsPaused();

        void pauseArrivals(long graceMs) throws BpfException;

        /** The graphs the layer has begun tracing so far (a count that only grows). */
        long graphsTraced() throws BpfException;

        void resumeArrivals() throws BpfException;

        /** The whole layer off, {@code why} its reason. */
        void operatorOff(String why) throws BpfException;

        static OperatorProbes of(ProbeSet probes) {
            OperatorKernelSide operator = probes.kernelSide(Layer.OPERATOR, OperatorKernelSide.class);
            return new OperatorProbes() {
                @Override
                public boolean operatorOn() {
                    return probes.isEnabled(Layer.OPERATOR);
                }

                @Override
                public boolean arrivalsPaused() {
                    return operator.arrivalsPaused();
                }

                @Override
                public void pauseArrivals(long graceMs) throws BpfException {
                    operator.pauseArrivals(graceMs);
                }

                @Override
                public void resumeArrivals() throws BpfException {
                    operator.resumeArrivals();
                }

                @Override
                public long graphsTraced() throws BpfException {
                    return operator.graphsTraced();
                }

                @Override
                public void operatorOff(String why) throws BpfException {
                    probes.disable(Layer.OPERATOR, why);
                }
            };
        }
    }

    private final double budgetPercent;
    private final OperatorProbes probes;
    private final Readings readings;
    private final Consumer<String> notice;
    private volatile BudgetStatus status;
    private volatile boolean stopped;
    private volatile boolean operatorSwitched;
    private volatile boolean failed;
    /** The tracepoint programs' mean run time in the latest phase they ran (budget thread only); NaN before. */
    private double tracepointNsPerRun = Double.NaN;
    private Thread thread;

    private OverheadBudget(double budgetPercent, OperatorProbes probes, Readings readings, Consumer<String> notice) {
        this.budgetPercent = budgetPercent;
        this.probes = probes;
        this.readings = readings;
        this.notice = notice;
        this.status = new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 1, BudgetPlan.samplingUndecided(budgetPercent));
    }

    /**
     * Starts the budget's thread; where the kernel keeps no run-time stats (before Linux 5.8) the status says
     * so and everything is traced.
     */
    static OverheadBudget start(double budgetPercent, ProbeSet probes, BpfObject object, int pid,
                                Consumer<String> notice) {
        ProbeRunStats stats;
        try {
            stats = ProbeRunStats.open(object);
        } catch (BpfException e) {
            OverheadBudget none = new OverheadBudget(budgetPercent, OperatorProbes.of(probes), null, notice);
            none.status = new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 1, "no estimate: " + e.getMessage());
            notice.accept("infertop: the overhead budget traces everything: " + e.getMessage());
            return none;
        }
        return start(budgetPercent, OperatorProbes.of(probes), machineReadings(stats, pid, notice), notice);
    }

    /** Starts the budget's thread on {@code readings} (a test's, or {@link #machineReadings}). */
    static OverheadBudget start(double budgetPercent, OperatorProbes probes, Readings readings,
                                Consumer<String> notice) {
        OverheadBudget budget = new OverheadBudget(budgetPercent, probes, readings, notice);
        budget.thread = Thread.ofPlatform().name("infertop-budget").daemon().start(budget::run);
        return budget;
    }

    /** The kernel's run stats of {@code stats}' programs, the target's and infertop's CPU, the machine's idle time. */
    private static Readings machineReadings(ProbeRunStats stats, int pid, Consumer<String> notice) {
        return new Readings() {
            @Override
            public Reading read() throws IOException {
                return new Reading(System.nanoTime(), stats.sample(), ProcessCpuTime.ns(pid), ProcessCpuTime.selfNs(),
                        MachineIdleTime.ns());
            }

            @Override
            public boolean targetAlive() {
                return java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc", Integer.toString(pid)));
            }

            @Override
            public BudgetPlan plan(double budgetPercent) {
                Optional<UprobeHitCost> measured = CeilingCache.defaultLocation()
                        .uprobeCostMeasuredIfMissing(line -> notice.accept("infertop: " + line));
                return new BudgetPlan(budgetPercent, measured.map(UprobeHitCost::nsPerHit).orElse(ASSUMED_HIT_NS),
                        measured.isPresent() ? "" : "hit cost assumed " + (long) ASSUMED_HIT_NS + " ns");
            }

            @Override
            public void close() {
                stats.close();
            }
        };
    }

    BudgetStatus status() {
        return status;
    }

    /** One reading: cumulative counts and clocks. */
    record Reading(long nowNs, ProbeRunStats.Sample probes, long targetCpuNs, long ownCpuNs,
                   long machineIdleNs) {
        BudgetPlan.Phase since(Reading earlier) {
            ProbeRunStats.Sample d = probes.minus(earlier.probes);
            return new BudgetPlan.Phase(nowNs - earlier.nowNs, d.uprobeHits(), d.arrivalHits(), d.bpfRunNs(),
                    targetCpuNs - earlier.targetCpuNs, ownCpuNs - earlier.ownCpuNs, machineIdleNs - earlier.machineIdleNs);
        }
    }

    private void run() {
        try {
            BudgetPlan plan = readings.plan(budgetPercent);
            // Until the first phase ends, the displayed estimate (records × hit cost) rests on this plan's hit cost.
            status = new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 1, status.sampling(),
                    BudgetStatus.BUDGET_WINDOW_S, plan.hitCost());
            // The first window is FIRST_ON_MS of every graph: shorter ones taught the clock sampler too little of
            // the code (measurements.md, "The clock sampler").
            long phaseMs = BudgetPlan.FIRST_ON_MS;
            // One reading ends a phase and starts the next: the attaches and detaches between them (infertop's
            // CPU, in the kernel) fall into the phase after, not between two.
            Reading before = readings.read();
            long tracedAtWindowStart = probes.graphsTraced();
            while (!stopped) {
                operatorSwitched = false; // before the state is read: a switch after it wakes this phase
                boolean operatorOnBefore = probes.operatorOn();
                if (!sleep(phaseMs)) {
                    return;
                }
                Reading now = readings.read();
                BudgetPlan.Phase phase = now.since(before);
                double tracepointNs = now.probes().minus(before.probes()).tracepointNsPerRun();
                if (Double.isFinite(tracepointNs)) {
                    tracepointNsPerRun = tracepointNs; // the sched layer ran: its latest measured run time
                }
                before = now;
                boolean operatorOn = probes.operatorOn();
                if (operatorSwitched || operatorOn != operatorOnBefore) {
                    // The layer went on or off meanwhile (a key, SIGUSR2, --op-when): the phase holds both states
                    // and is not counted. Switched on, its probes trace every graph from now for a first window
                    // as at the start (2 s: the op table fills at once, where a 0.25 s window after the layer's
                    // probes came back could attribute no graph at all), not for whatever was left of a 5 s
                    // phase without the layer (0-5 s, after each switch, whatever the budget).
                    phaseMs = operatorOn && !probes.arrivalsPaused() ? BudgetPlan.FIRST_ON_MS : OPERATOR_OFF_PHASE_MS;
                    continue;
                }
                if (DEBUG) {
                    System.err.printf(java.util.Locale.ROOT, "infertop budget: %s phase %d ms: %d hits (%d arrivals), "
                                    + "BPF %.2f ms, target CPU %.1f ms, own CPU %.1f ms (counted %.1f), machine idle "
                                    + "%.1f ms%n", probes.arrivalsPaused() ? "gap" : "window", phase.wallNs() / 1_000_000,
                            phase.uprobeHits(), phase.arrivalHits(), phase.bpfRunNs() / 1e6, phase.targetCpuNs() / 1e6,
                            phase.ownCpuNs() / 1e6, phase.ownCostNs() / 1e6, phase.machineIdleNs() / 1e6);
                }
                if (!probes.operatorOn()) {
                    plan.operatorOff(phase);
                    phaseMs = OPERATOR_OFF_PHASE_MS;
                } else if (!probes.arrivalsPaused()) {
                    long offMs = plan.afterOnPhase(phase);
                    if (offMs > 0) {
                        awaitTracedGraphs(tracedAtWindowStart, 1);
                        probes.pauseArrivals(GRACE_MS);
                        phaseMs = offMs;
                    } else {
                        phaseMs = plan.windowMs();
                    }
                } else {
                    plan.afterOffPhase(phase);
                    tracedAtWindowStart = probes.graphsTraced();
                    probes.resumeArrivals();
                    phaseMs = plan.windowMs();
                }
                status = plan.status().withHitCost(plan.hitCost().withTracepointNsPerRun(tracepointNsPerRun));
            }
        } catch (IOException e) {
            if (!stopped && readings.targetAlive()) {
                failClosed(e);
            }
            // else the target is gone: the session ends too
        } catch (BpfException | RuntimeException e) {
            if (!stopped) {
                failClosed(e);
            }
        }
    }

    /**
     * Keeps the window open until {@code graphs} graphs began in it (the probes trace graphs from their start), at
     * most {@link #MAX_AWAIT_GRAPH_MS}: the window's last graph then ends before the probes go (pauseArrivals).
     */
    private void awaitTracedGraphs(long tracedAtWindowStart, int graphs) throws BpfException {
        long deadlineNs = System.nanoTime() + MAX_AWAIT_GRAPH_MS * 1_000_000;
        while (!stopped && !operatorSwitched && System.nanoTime() < deadlineNs) {
            if (probes.graphsTraced() - tracedAtWindowStart >= graphs) {
                return;
            }
            if (!sleep(AWAIT_GRAPH_POLL_MS)) {
                return;
            }
        }
    }

    /**
     * The cost is no longer known: the operator layer's cheapest state (off; where that fails too, its
     * per-thread probes away), said once and kept in the status.
     */
    private void failClosed(Exception e) {
        failed = true;
        String why = e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
        String outcome;
        try {
            probes.operatorOff("the overhead budget failed");
            outcome = "operator layer switched off";
        } catch (BpfException | RuntimeException off) {
            outcome = "operator layer left on, cannot switch it off: " + off.getMessage();
            try {
                probes.pauseArrivals(GRACE_MS);
                outcome = "operator layer's per-thread probes detached, cannot switch it off: " + off.getMessage();
            } catch (BpfException | RuntimeException ignored) {
                // the layer's status says what is attached
            }
        }
        status = BudgetStatus.failed(budgetPercent, why + "; " + outcome);
        notice.accept("infertop: the overhead budget failed (" + why + "): " + outcome + "; 3 or SIGUSR2 switches"
                + " it on again, unsampled");
    }

    /** Whether the budget gave up (see {@link #failClosed}): --op-when must not switch the layer on then. */
    boolean failed() {
        return failed;
    }

    /**
     * The operator layer went on or off: the phase in progress ends now (the budget's thread wakes at once), so
     * that a layer switched on is sampled under the budget from its first second.
     */
    void operatorSwitched() {
        operatorSwitched = true;
        Thread running = thread;
        if (running != null) {
            LockSupport.unpark(running);
        }
    }

    /** Sleeps {@code ms}, or less where the operator layer is switched; false when stopped. */
    private boolean sleep(long ms) {
        long deadlineNs = System.nanoTime() + ms * 1_000_000;
        while (!stopped && !operatorSwitched) {
            long leftNs = deadlineNs - System.nanoTime();
            if (leftNs <= 0) {
                break;
            }
            LockSupport.parkNanos(this, leftNs);
            if (Thread.interrupted()) {
                return false;
            }
        }
        return !stopped;
    }

    @Override
    public void close() {
        stopped = true;
        Thread running = thread;
        if (running != null) {
            running.interrupt();
            try {
                running.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (readings != null) {
            readings.close();
        }
    }
}
