package dev.infertop.session;

import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.ProbeRunStats;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.machine.CeilingCache;
import dev.infertop.machine.UprobeHitCost;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.Layer;
import dev.infertop.target.MachineIdleTime;
import dev.infertop.target.ProcessCpuTime;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Keeps infertop's estimated cost under {@code --budget}: a thread of its own (attaching and detaching probes
 * takes the kernel ~0.1 s each, which must not hold up the collector) that alternates sample windows, with the
 * operator layer's per-thread probes attached, and gaps without them, each as long as {@link BudgetPlan} says.
 * What it costs comes from the kernel's count of each program's runs and run time ({@link ProbeRunStats}), the
 * cost of one uprobe hit measured on this machine ({@link dev.infertop.machine.UprobeCostProbe}, cached), and
 * CPU times from /proc ({@link ProcessCpuTime}, and {@link MachineIdleTime} for whether infertop's own CPU took a
 * core from the target). With budget 0 it only estimates.
 */
final class OverheadBudget implements AutoCloseable {
    /** After a window ends, the graph in flight finishes with its arrivals before the probes go. */
    static final long GRACE_MS = 100;
    /** Where a hit's cost cannot be measured: this VM's figure for a probe on an emulated call (FACTS.md). */
    static final double ASSUMED_HIT_NS = 800;
    /**
     * With the operator layer off there are no windows to decide: the estimate is only shown, and read this
     * seldom: a reading (every program's run stats, three clocks, /proc/stat) cost this thread ~1 ms of CPU in
     * the minutes it runs interpreted (1.03 ms/s of CPU at one phase a second on the bench model, 0.27 at one
     * every 5 s).
     */
    static final long OPERATOR_OFF_PHASE_MS = 5000;
    /** Each phase's figures on stderr (INFERTOP_DEBUG, as the start's timeline). */
    private static final boolean DEBUG = System.getenv("INFERTOP_DEBUG") != null;

    private final double budgetPercent;
    private final ProbeSet probes;
    private final ProbeRunStats stats;
    private final int pid;
    private final Consumer<String> notice;
    private volatile BudgetStatus status;
    private volatile boolean stopped;
    private volatile boolean operatorSwitched;
    private Thread thread;

    private OverheadBudget(double budgetPercent, ProbeSet probes, ProbeRunStats stats, int pid, Consumer<String> notice) {
        this.budgetPercent = budgetPercent;
        this.probes = probes;
        this.stats = stats;
        this.pid = pid;
        this.notice = notice;
        this.status = new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 1, "measuring");
    }

    /**
     * Starts the budget's thread; where the kernel keeps no run-time stats (before Linux 5.8) the status says
     * so and everything is traced.
     */
    static OverheadBudget start(double budgetPercent, ProbeSet probes, dev.infertop.bpf.BpfObject object, int pid,
                                Consumer<String> notice) {
        ProbeRunStats stats;
        try {
            stats = ProbeRunStats.open(object);
        } catch (BpfException e) {
            OverheadBudget none = new OverheadBudget(budgetPercent, probes, null, pid, notice);
            none.status = new BudgetStatus(budgetPercent, Double.NaN, Double.NaN, 1, "no estimate: " + e.getMessage());
            notice.accept("infertop: the overhead budget traces everything: " + e.getMessage());
            return none;
        }
        OverheadBudget budget = new OverheadBudget(budgetPercent, probes, stats, pid, notice);
        budget.thread = Thread.ofPlatform().name("infertop-budget").daemon().start(budget::run);
        return budget;
    }

    BudgetStatus status() {
        return status;
    }

    private record Reading(long nowNs, ProbeRunStats.Sample probes, long targetCpuNs, long ownCpuNs,
                           long machineIdleNs) {
        BudgetPlan.Phase since(Reading earlier) {
            ProbeRunStats.Sample d = probes.minus(earlier.probes);
            return new BudgetPlan.Phase(nowNs - earlier.nowNs, d.uprobeHits(), d.arrivalHits(), d.bpfRunNs(),
                    targetCpuNs - earlier.targetCpuNs, ownCpuNs - earlier.ownCpuNs, machineIdleNs - earlier.machineIdleNs);
        }
    }

    private void run() {
        Optional<UprobeHitCost> measured = CeilingCache.defaultLocation()
                .uprobeCostMeasuredIfMissing(line -> notice.accept("infertop: " + line));
        BudgetPlan plan = new BudgetPlan(budgetPercent, measured.map(UprobeHitCost::nsPerHit).orElse(ASSUMED_HIT_NS),
                measured.isPresent() ? "" : "hit cost assumed " + (long) ASSUMED_HIT_NS + " ns");
        long phaseMs = BudgetPlan.FIRST_ON_MS;
        try {
            // One reading ends a phase and starts the next: the attaches and detaches between them (infertop's
            // CPU, in the kernel) fall into the phase after, not between two.
            Reading before = read();
            while (!stopped) {
                operatorSwitched = false; // before the state is read: a switch after it wakes this phase
                boolean operatorOnBefore = probes.isEnabled(Layer.OPERATOR);
                if (!sleep(phaseMs)) {
                    return;
                }
                Reading now = read();
                BudgetPlan.Phase phase = now.since(before);
                before = now;
                boolean operatorOn = probes.isEnabled(Layer.OPERATOR);
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
                if (!probes.isEnabled(Layer.OPERATOR)) {
                    plan.operatorOff(phase);
                    phaseMs = OPERATOR_OFF_PHASE_MS;
                } else if (!probes.arrivalsPaused()) {
                    long offMs = plan.afterOnPhase(phase);
                    if (offMs > 0) {
                        probes.pauseArrivals(GRACE_MS);
                        phaseMs = offMs;
                    } else {
                        phaseMs = plan.windowMs();
                    }
                } else {
                    plan.afterOffPhase(phase);
                    probes.resumeArrivals();
                    phaseMs = plan.windowMs();
                }
                status = plan.status();
            }
        } catch (IOException e) {
            // the target is gone: the session ends too
        } catch (BpfException | RuntimeException e) {
            notice.accept("infertop: the overhead budget stopped sampling: " + e.getMessage());
            try {
                probes.resumeArrivals();
            } catch (BpfException ignored) {
                // the layer's status says what is attached
            }
        }
    }

    private Reading read() throws IOException {
        return new Reading(System.nanoTime(), stats.sample(), ProcessCpuTime.ns(pid), ProcessCpuTime.selfNs(),
                MachineIdleTime.ns());
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
        if (stats != null) {
            stats.close();
        }
    }
}
