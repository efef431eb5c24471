package dev.infertop.model;

import java.util.ArrayList;
import java.util.List;

/**
 * Which figures come from the operator layer's sample windows: under the overhead budget its graph walk and
 * per-thread probes run only in windows (a share of the time, {@link BudgetStatus#arrivalShare()}), and so do
 * the layers that read what they find (the counters at each node group, the MoE ids of each MUL_MAT_ID). An
 * interval between windows has none of these; the live view then holds the last window's and says how old.
 * The token and graph layers count every call, and {@code ops_estimated} scales the windows to every graph.
 */
public final class SampledFigures {
    private SampledFigures() {}

    /** The operator layer's figures scaled to every graph. */
    public static final String ESTIMATED = JsonSchema.OPS_ESTIMATED.key();

    /** The JSON fields (of a line, and of a snapshot's summary) filled from windows only. */
    public static final List<String> WINDOW_FIGURES = windowFigures();

    private static List<String> windowFigures() {
        List<String> fields = new ArrayList<>();
        for (Layer layer : List.of(Layer.OPERATOR, Layer.COUNTERS, Layer.MOE)) {
            fields.addAll(layer.jsonSections());
        }
        fields.remove(ESTIMATED); // every graph's, scaled from the windows'
        fields.remove(JsonSchema.OPS_SAMPLED.key()); // the clock samples: between the windows too

        fields.addAll(List.of(JsonSchema.OP_GRAPHS.key(), JsonSchema.OP_GRAPHS_UNATTRIBUTED.key(),
                JsonSchema.BACKENDS.key() + ".CPU." + JsonSchema.BackendField.OPS.key()));
        return List.copyOf(fields);
    }

    /** The share of the time the operator layer traced graphs: the budget's, else 1 with the layer on, else 0. */
    public static double operatorSampledRatio(Snapshot s) {
        boolean on = s.layers().stream().anyMatch(l -> l.layer() == Layer.OPERATOR
                && (l.state() == LayerStatus.State.ON || l.state() == LayerStatus.State.PARTIAL));
        if (!on) {
            return 0;
        }
        return s.budget().present() && !s.budget().failed() ? s.budget().arrivalShare() : 1;
    }

    /** "window 12 s ago": the age of figures held from the last window, for a heading. */
    public static String ageText(double ageSeconds) {
        return ageSeconds < 0.5 ? "window now" : String.format(java.util.Locale.ROOT, "window %.0f s ago", ageSeconds);
    }
}
