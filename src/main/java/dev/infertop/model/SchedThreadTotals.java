package dev.infertop.model;

/**
 * One target thread's time by state. Running time is counted when the thread leaves the CPU, off-CPU time
 * when it comes back, so a span sees each stretch once, at its end.
 *
 * @param switches    times it came back on a CPU
 * @param preemptions of those, times it had left while still runnable (preempted)
 */
public record SchedThreadTotals(int tid, long runningNs, long runnableNs, long sleepingNs, long switches,
                                long preemptions) {
    public long totalNs() {
        return runningNs + runnableNs + sleepingNs;
    }

    /** Share of its time spent waiting for a CPU. */
    public double runnableFraction() {
        long total = totalNs();
        return total == 0 ? 0.0 : (double) runnableNs / total;
    }
}
