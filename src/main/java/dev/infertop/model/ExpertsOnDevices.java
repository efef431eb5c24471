package dev.infertop.model;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * MUL_MAT_ID nodes that backends other than the CPU computed (their op counts, read while the operator layer
 * traces): the MoE layer reads those nodes' ids only where the scheduler copies them back to the host, so the
 * MoE panel and JSON say how many there were rather than show a heatmap silently short of them.
 */
public final class ExpertsOnDevices {
    /** ggml's op name of the expert matmul. */
    public static final String MUL_MAT_ID = "MUL_MAT_ID";

    private ExpertsOnDevices() {}

    /** Per backend other than the CPU, its MUL_MAT_ID nodes in {@code figures}' span; empty when none. */
    public static Map<String, Long> nodes(Figures figures) {
        Map<String, Long> byBackend = new LinkedHashMap<>();
        for (BackendOps backend : figures.backendOps()) {
            if (backend.backend().equals(BackendBreakdown.CPU)) {
                continue;
            }
            for (BackendOps.Op op : backend.ops()) {
                if (op.op().equals(MUL_MAT_ID) && op.nodes() > 0) {
                    byBackend.merge(backend.backend(), op.nodes(), Long::sum);
                }
            }
        }
        return byBackend;
    }
}
