package dev.infertop.view;

import dev.infertop.model.Layer;

/**
 * Which panel fills the live view's body under the header and thread lanes (bpftop's Mode): one at a time, the
 * operator table by default. A panel's key opens it (closing any other) and, pressed again, returns to the
 * table; Esc returns to the table from any of them. The help is not one of them: it covers the whole screen
 * and, closed, gives back the panel that was up.
 */
public enum BodyPanel {
    /** The operator (or tensor-group) table. */
    OPERATORS(Layer.OPERATOR, "operator table"),
    /** The table with the selected row's latency plot under it (key Enter/F3 in the default keys). */
    DETAILS(Layer.OPERATOR, "latency plot"),
    /** Thread states and interference. */
    THREAD_STATES(Layer.SCHED, "thread states panel"),
    /** Perf counters per op. */
    COUNTERS(Layer.COUNTERS, "counters panel"),
    /** Per-backend graphs and ops. */
    BACKENDS(Layer.GRAPH, "backends panel"),
    /** A server's sequences and batch sizes. */
    REQUESTS(Layer.TOKEN, "requests panel"),
    /** MoE experts. */
    MOE(Layer.MOE, "MoE panel"),
    /** The roofline per op: achieved rates against the machine's ceilings. */
    ROOFLINE(Layer.OPERATOR, "roofline panel");

    private final Layer layer;
    private final String title;

    BodyPanel(Layer layer, String title) {
        this.layer = layer;
        this.title = title;
    }

    /** The layer whose figures the panel shows: it says so and how to switch it on when that layer is off. */
    public Layer layer() {
        return layer;
    }

    /** What the man page and help call it. */
    public String title() {
        return title;
    }

    /** {@code panel} if it is not up, else back to the table: what a panel's key does. */
    public BodyPanel toggled(BodyPanel panel) {
        return this == panel ? OPERATORS : panel;
    }
}
