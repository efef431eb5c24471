package dev.infertop.model;

import java.util.List;

/**
 * The sched layer over some span: each target thread's time running, runnable (waiting for a CPU) and
 * sleeping; the same off-CPU time per op (joined with the operator layer's node groups); and the tasks that
 * ran on a CPU while a target thread waited for it, most time first.
 *
 * @param interferers   the tasks that ran longest, most first (at most SchedAggregator.TOP_INTERFERERS)
 * @param otherInterferersNs the time of every other task that ran while target threads waited: the listed ones'
 *                      and this add up to all of it
 * @param offRecords    off-CPU records streamed (one per switch-in of a target thread)
 * @param culpritRecords culprit records streamed
 * @param kernelHits    sched_switch/sched_wakeup handler runs, machine-wide (each costs a little, even when
 *                      it filters the task out)
 */
public record SchedTotals(List<SchedThreadTotals> threads, List<SchedOpTotals> ops, List<Interferer> interferers,
                          long otherInterferersNs, long offRecords, long culpritRecords, long kernelHits) {
    public static final SchedTotals EMPTY = new SchedTotals(List.of(), List.of(), List.of(), 0, 0, 0, 0);

    /** Without "other" interferers (a replayed snapshot of an older release, a test). */
    public SchedTotals(List<SchedThreadTotals> threads, List<SchedOpTotals> ops, List<Interferer> interferers,
                       long offRecords, long culpritRecords, long kernelHits) {
        this(threads, ops, interferers, 0, offRecords, culpritRecords, kernelHits);
    }

    public SchedTotals {
        threads = List.copyOf(threads);
        ops = List.copyOf(ops);
        interferers = List.copyOf(interferers);
    }

    public long runningNs() {
        return threads.stream().mapToLong(SchedThreadTotals::runningNs).sum();
    }

    public long runnableNs() {
        return threads.stream().mapToLong(SchedThreadTotals::runnableNs).sum();
    }

    public long sleepingNs() {
        return threads.stream().mapToLong(SchedThreadTotals::sleepingNs).sum();
    }

    /** Every task's time that ran while target threads waited: the listed interferers' and "other"'s. */
    public long interferersNs() {
        return interferers.stream().mapToLong(Interferer::ns).sum() + otherInterferersNs;
    }

    /** The task that ran longest while target threads waited, or null. */
    public Interferer worstInterferer() {
        return interferers.isEmpty() ? null : interferers.getFirst();
    }

    /** Share of the target threads' wait for a CPU during which {@code culprit} ran there (0.0 to 1.0). */
    public double waitShare(Interferer culprit) {
        long waited = runnableNs();
        return waited <= 0 ? 0.0 : Math.min(1.0, (double) culprit.ns() / waited);
    }
}
