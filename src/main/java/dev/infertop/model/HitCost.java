package dev.infertop.model;

/**
 * What one uprobe hit (one run of a uprobe program: a trap of the target's thread) costs the target: the figure
 * {@code infertop machine} measured under the running kernel (cached per kernel), or, where nothing was measured,
 * {@link #DEFAULT}. The overhead budget multiplies the kernel's run counts by it, and every displayed estimate
 * ({@link OverheadEstimate}) uses the same one.
 *
 * @param nsPerHit what one hit costs, in nanoseconds
 * @param measured true when measured on this machine; false for {@link #DEFAULT}
 */
public record HitCost(double nsPerHit, boolean measured) {
    /**
     * Where no hit was measured: a probe on an instruction the kernel emulates on the VMs infertop was first
     * built on (src/site/markdown/measurements.md, "Machines"). A trap can cost several times this on another
     * machine (a paravirtualised guest), which is why it is labelled wherever it is used.
     */
    public static final HitCost DEFAULT = new HitCost(800, false);

    /** "measured" or "default": said beside each estimate that rests on it. */
    public String source() {
        return measured ? "measured" : "default";
    }
}
