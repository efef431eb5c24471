package dev.infertop.model;

/**
 * infertop's cost in the target, estimated: probe hits in an interval times the per-hit cost measured on
 * this kind of machine (FACTS.md: ~0.8 µs for a probe on an instruction the kernel emulates, ~1.5 µs for an
 * entry + return pair). An estimate, not a measurement: the views label it so.
 */
public final class ProbeCostEstimate {
    private ProbeCostEstimate() {}

    /** One uprobe hit on an emulated instruction (push, call). */
    public static final double EMULATED_HIT_NS = 800;
    /** An entry probe plus its return probe. */
    public static final double ENTRY_RETURN_NS = 1_500;
    /**
     * One run of a sched-layer tracepoint program (tp_btf: no trap, a few map lookups). Assumed, not
     * measured here: the figure is the order of magnitude of a short tp_btf program.
     */
    public static final double SCHED_HIT_NS = 300;

    /** Estimated sched-layer time over the interval, machine-wide: it runs on every context switch. */
    public static double schedNs(SchedTotals sched) {
        return sched.kernelHits() * SCHED_HIT_NS;
    }

    /** Estimated probe time in the target over the interval, in nanoseconds. */
    public static double probeNs(Snapshot s) {
        double ns = 0;
        // An encoder pass hits llama_process's entry and return probes as a decode call does.
        ns += (s.interval().tokens().decodeCalls() + s.interval().tokens().encodeCalls()) * ENTRY_RETURN_NS;
        for (BackendTotals backend : s.interval().backends()) {
            ns += backend.computes() * ENTRY_RETURN_NS;
        }
        ns += s.interval().cpuGraphs().computes() * ENTRY_RETURN_NS;
        OperatorTotals ops = s.interval().operators();
        // One hit per thread per node group (its barrier call), one per thread per graph (its start).
        long graphs = ops.graphsAttributed() + ops.graphsUnattributed();
        ns += ops.threadGroups() * EMULATED_HIT_NS + graphs * ops.threads().size() * EMULATED_HIT_NS;
        ns += schedNs(s.interval().sched());
        ns += s.interval().counters() == null ? 0 : counterReadsNs(s.interval().counters());
        return ns;
    }

    /** Estimated probe time as a fraction of one CPU over the interval (0.012 = 1.2 % of a core). */
    public static double cpuFraction(Snapshot s) {
        return s.interval().spanNs() <= 0 ? 0.0 : probeNs(s) / s.interval().spanNs();
    }

    /**
     * One bpf_perf_event_read_value in a probe: an assumed figure (not measured on this machine yet) for a
     * software or PMU counter read on the local CPU.
     */
    public static final double COUNTER_READ_NS = 150;

    /** Counters layer: estimated time of its reads (one per event per node group per thread) in the target. */
    public static double counterReadsNs(CounterTotals counters) {
        return (counters.countedGroups() + counters.migratedGroups()) * (double) counters.events().size()
                * COUNTER_READ_NS;
    }
}
