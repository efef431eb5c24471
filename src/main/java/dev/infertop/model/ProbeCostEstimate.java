package dev.infertop.model;

/**
 * Probe time implied by an interval's records: the hits its records stand for × the {@link HitCost} of one hit.
 * Only {@link OverheadEstimate} uses it for the cost of watching, where the overhead budget has no estimate of
 * its own; the sched layer's JSON and panel use {@link #schedNs} with the same {@link HitCost}.
 */
public final class ProbeCostEstimate {
    private ProbeCostEstimate() {}

    /**
     * One bpf_perf_event_read_value in a probe: an assumed figure, not measured, for a software or PMU counter
     * read on the local CPU.
     */
    public static final double COUNTER_READ_NS = 150;

    /**
     * Estimated sched-layer time over the interval, machine-wide (it runs on every context switch): its runs ×
     * a tracepoint run's cost ({@link HitCost#tracepointNs}: measured by the kernel, else the default).
     */
    public static double schedNs(SchedTotals sched, HitCost hit) {
        return sched.kernelHits() * hit.tracepointNs();
    }

    /** Uprobe hits the interval's records stand for: each is one run of a uprobe program, one trap. */
    public static long uprobeHits(Snapshot s) {
        long hits = 0;
        // Entry and return probes: two hits a call. An encoder pass hits llama_process's as a decode call does.
        hits += 2 * (s.interval().tokens().decodeCalls() + s.interval().tokens().encodeCalls());
        for (BackendTotals backend : s.interval().backends()) {
            hits += 2 * backend.computes();
        }
        hits += 2 * s.interval().cpuGraphs().computes();
        OperatorTotals ops = s.interval().operators();
        // One hit per thread per node group (its barrier call), one per thread per graph (its start).
        long graphs = ops.graphsAttributed() + ops.graphsUnattributed();
        hits += ops.threadGroups() + graphs * ops.threads().size();
        return hits;
    }

    /** Estimated probe time over the interval, in nanoseconds, with {@code hit} for each uprobe hit. */
    public static double probeNs(Snapshot s, HitCost hit) {
        double ns = uprobeHits(s) * hit.nsPerHit();
        ns += schedNs(s.interval().sched(), hit);
        ns += s.interval().counters() == null ? 0 : counterReadsNs(s.interval().counters());
        return ns;
    }

    /** Estimated probe time as a fraction of one CPU over the interval (0.012 = 1.2 % of a core). */
    public static double cpuFraction(Snapshot s, HitCost hit) {
        return s.interval().spanNs() <= 0 ? 0.0 : probeNs(s, hit) / s.interval().spanNs();
    }

    /** Counters layer: estimated time of its reads (one per event per node group per thread) in the target. */
    public static double counterReadsNs(CounterTotals counters) {
        return (counters.countedGroups() + counters.migratedGroups()) * (double) counters.events().size()
                * COUNTER_READ_NS;
    }
}
