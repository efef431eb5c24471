package dev.infertop.view;

/**
 * Which panel fills the live view's body under the header and thread lanes (bpftop's Mode): one at a time, the
 * operator table by default. A panel's key opens it (closing any other) and, pressed again, returns to the
 * table; Esc returns to the table from any of them. The help is not one of them: it covers the whole screen
 * and, closed, gives back the panel that was up.
 */
public enum BodyPanel {
    /** The operator (or tensor-group) table. */
    OPERATORS,
    /** The table with the selected row's latency plot under it (key Enter/F3 in the default keys). */
    DETAILS,
    /** Thread states and interference (sched layer). */
    THREAD_STATES,
    /** Perf counters per op. */
    COUNTERS,
    /** Per-backend graphs and ops. */
    BACKENDS,
    /** A server's sequences and batch sizes. */
    REQUESTS,
    /** MoE experts. */
    MOE,
    /** The roofline per op: achieved rates against the machine's ceilings (operator layer). */
    ROOFLINE;

    /** {@code panel} if it is not up, else back to the table: what a panel's key does. */
    public BodyPanel toggled(BodyPanel panel) {
        return this == panel ? OPERATORS : panel;
    }
}
