package dev.infertop.model;

import java.util.ArrayList;
import java.util.List;

/**
 * Graphs, busy time and ops per backend, as the backends panel and the JSON {@code backends} field show them:
 * graph counts and busy time from the graph layer; ops of the CPU backend from the operator layer (every
 * node group, timed); ops of other backends counted per graph ({@link BackendOps}).
 */
public record BackendBreakdown(String backend, long graphs, long nodes, long busyNs, List<BackendOps.Op> ops,
                               BackendOps.NodeDispatch dispatch) {
    public BackendBreakdown {
        ops = List.copyOf(ops);
    }

    /** The CPU backend's name in config/backends.conf. */
    public static final String CPU = "CPU";

    /** One entry per backend that computed graphs in the span of {@code figures} (an interval, or the run). */
    public static List<BackendBreakdown> of(Figures figures) {
        List<BackendTotals> backends = figures.backends();
        List<BackendOps> counted = figures.backendOps();
        OperatorTotals operators = figures.operators();
        List<BackendBreakdown> result = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        for (BackendTotals backend : backends) {
            List<BackendOps.Op> ops = new ArrayList<>();
            BackendOps.NodeDispatch dispatch = null;
            if (backend.backend().equals(CPU)) {
                for (OpTotals op : operators.ops()) {
                    ops.add(new BackendOps.Op(op.op(), op.nodes(), op.wallNs(), true));
                }
            } else {
                for (BackendOps other : counted) {
                    if (other.backend().equals(backend.backend())) {
                        ops.addAll(other.ops());
                        dispatch = other.dispatch();
                    }
                }
            }
            result.add(new BackendBreakdown(backend.backend(), backend.computes(), backend.nodes(), backend.busyNs(), ops,
                    dispatch));
            seen.add(backend.backend());
        }
        for (BackendOps other : counted) {
            if (!seen.contains(other.backend())) { // graph layer off: counts still came
                result.add(new BackendBreakdown(other.backend(), other.graphs(), other.nodes(), other.busyNs(), other.ops(),
                        other.dispatch()));
            }
        }
        return result;
    }
}
