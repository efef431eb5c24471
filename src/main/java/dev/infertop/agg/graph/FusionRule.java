package dev.infertop.agg.graph;

import java.util.List;

/**
 * Which runs of consecutive ops the target's node loop fuses into one call, as op numbers
 * (agg's FusionPatterns reads them from the target's fused-op function names).
 */
public interface FusionRule {
    /** Each fusable run, e.g. {RMS_NORM, MUL}; read on every graph, so cheap. */
    List<int[]> patterns();
}
