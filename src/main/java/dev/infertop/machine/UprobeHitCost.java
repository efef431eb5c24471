package dev.infertop.machine;

import java.util.Locale;

/**
 * What one uprobe hit costs on this machine, measured once per kernel and cached beside the ceilings: the
 * extra time of a loop whose every iteration hits a uprobe on a call instruction (the kind the operator
 * layer probes), divided by the hits the kernel counted. The overhead budget multiplies it by the hits
 * infertop's probes take.
 *
 * @param nsPerHit the fastest probed round's time less the fastest plain one's, per hit
 * @param kernel   {@code uname -r} when measured: another kernel is measured again
 */
public record UprobeHitCost(int formatVersion, String measuredAt, String kernel, double nsPerHit, double minNsPerHit,
                            double maxNsPerHit, int rounds, long callsPerRound, String method) {
    static final int FORMAT_VERSION = 1;

    /** The line {@code infertop machine} prints. */
    public String describe() {
        return String.format(Locale.ROOT, "uprobe hit    %7.2f µs       (range %.2f-%.2f; %s; kernel %s, %s)",
                nsPerHit / 1e3, minNsPerHit / 1e3, maxNsPerHit / 1e3, method, kernel, measuredAt);
    }

    /** Within what a uprobe can cost anywhere (50 ns to 1 ms a hit), and of this format. */
    boolean plausible() {
        return formatVersion == FORMAT_VERSION && rounds > 0 && kernel != null
                && Double.isFinite(nsPerHit) && nsPerHit >= 50 && nsPerHit <= 1e6
                && minNsPerHit <= nsPerHit && nsPerHit <= maxNsPerHit;
    }
}
