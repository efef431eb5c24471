package dev.infertop.model;

/**
 * What a run of one of infertop's probe programs costs the target, as every estimate uses it
 * ({@link OverheadEstimate}, the sched layer's cost): a uprobe hit (a trap of the target's thread) as
 * {@code infertop machine} measured it under the running kernel (cached per kernel), and a tracepoint program's
 * run (no trap) as the kernel's own run-time stats of those programs measured it during the run. Where nothing
 * was measured, the documented defaults below stand in, and the outputs say so.
 *
 * @param nsPerHit           what one uprobe hit costs, in nanoseconds
 * @param measured           true when {@code nsPerHit} was measured on this machine; false for the default
 * @param tracepointNsPerRun a tracepoint program's mean run time measured by the kernel; NaN where not measured
 */
public record HitCost(double nsPerHit, boolean measured, double tracepointNsPerRun) {
    /**
     * Where no hit was measured: a probe on an instruction the kernel emulates on the VMs infertop was first
     * built on (src/site/markdown/measurements.md, "Machines"). A trap can cost several times this on another
     * machine (a paravirtualised guest), which is why it is labelled wherever it is used.
     */
    public static final HitCost DEFAULT = new HitCost(800, false);

    /**
     * Where no tracepoint run was measured: one run of a sched-layer tp_btf program (no trap, a few map
     * lookups), the order of magnitude of a short program; assumed, not measured.
     */
    public static final double DEFAULT_TRACEPOINT_NS_PER_RUN = 300;

    /** A uprobe hit cost, no tracepoint run measured. */
    public HitCost(double nsPerHit, boolean measured) {
        this(nsPerHit, measured, Double.NaN);
    }

    /** "measured" or "default": said beside each estimate that rests on the uprobe hit cost. */
    public String source() {
        return measured ? "measured" : "default";
    }

    /** Whether a tracepoint program's run time was measured. */
    public boolean tracepointMeasured() {
        return Double.isFinite(tracepointNsPerRun) && tracepointNsPerRun > 0;
    }

    /** A tracepoint program's run: measured, else {@link #DEFAULT_TRACEPOINT_NS_PER_RUN}. */
    public double tracepointNs() {
        return tracepointMeasured() ? tracepointNsPerRun : DEFAULT_TRACEPOINT_NS_PER_RUN;
    }

    /** The same uprobe hit cost with {@code ns} measured for a tracepoint run (NaN keeps none). */
    public HitCost withTracepointNsPerRun(double ns) {
        return new HitCost(nsPerHit, measured, ns);
    }
}
