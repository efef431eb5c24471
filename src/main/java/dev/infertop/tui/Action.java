package dev.infertop.tui;

import dev.infertop.model.Layer;
import dev.infertop.view.BodyPanel;

import java.util.Locale;

/** What a key can do in the live view. The loop handles every action; the help screen lists every one. */
public enum Action {
    QUIT("quit (restores the terminal, detaches every probe)"),
    HELP("show or hide this help"),
    UP("move the selection up"),
    DOWN("move the selection down"),
    PAGE_UP("one page up"),
    PAGE_DOWN("one page down"),
    TOP("first row"),
    BOTTOM("last row"),
    DETAILS("latency plot of the selected row (again: close)", BodyPanel.DETAILS),
    SORT_NEXT("sort by the next column"),
    SORT_PREVIOUS("sort by the previous column"),
    SORT_REVERSE("reverse the sort order"),
    GROUP_BY("rows by op type / by tensor group (layer x attention/FFN)"),
    FILTER("filter rows by a typed pattern (Enter keeps, Esc clears)"),
    FREEZE("freeze the display (data keeps flowing)"),
    FASTER("shorter refresh interval"),
    SLOWER("longer refresh interval"),
    TOGGLE_TOKEN("token layer on/off (attaches/detaches its probes)", Layer.TOKEN),
    TOGGLE_GRAPH("graph layer on/off (attaches/detaches its probes)", Layer.GRAPH),
    TOGGLE_OPERATOR("operator layer on/off (attaches/detaches its probes)", Layer.OPERATOR),
    CLOSE("close help, details or filter"),
    TOGGLE_SCHED("sched layer on/off (attaches/detaches its tracepoints)", Layer.SCHED),
    THREAD_STATES("thread states panel: running/runnable/sleeping per thread, who took the CPU (again: close)",
            BodyPanel.THREAD_STATES),
    TOGGLE_COUNTERS("counters layer on/off (opens/closes its perf events)", Layer.COUNTERS),
    COUNTERS_PANEL("counters panel: IPC, L3 refills, verdict per op", BodyPanel.COUNTERS),
    SNAPSHOT("write a snapshot directory (summary, hlog, trace, report)"),
    BACKENDS("backends panel: graphs, busy time and ops per backend (again: close)", BodyPanel.BACKENDS),
    DAG("write the operator DAG of the last decode graph (a .dot file)"),
    TOGGLE_MOE("moe layer on/off (switches the operator layer on too)", Layer.MOE),
    MOE_PANEL("MoE panel: layer x expert heatmap, CV, per-expert time", BodyPanel.MOE),
    REQUESTS("requests panel: a server's sequences (phase, tokens, TTFT, TPOT), batch sizes (again: close)",
            BodyPanel.REQUESTS),
    ROOFLINE("roofline panel: GB/s, GFLOP/s, FLOP/byte, share of each ceiling and verdict per op; decode bound "
            + "vs measured (again: close)", BodyPanel.ROOFLINE);

    private final String description;
    private final Layer layer;
    private final BodyPanel panel;

    Action(String description) {
        this(description, null, null);
    }

    Action(String description, Layer layer) {
        this(description, layer, null);
    }

    Action(String description, BodyPanel panel) {
        this(description, null, panel);
    }

    Action(String description, Layer layer, BodyPanel panel) {
        this.description = description;
        this.layer = layer;
        this.panel = panel;
    }

    /** The body panel the action opens (and, pressed again, closes), or null. */
    public BodyPanel panel() {
        return panel;
    }

    public String description() {
        return description;
    }

    /** The layer a toggle action switches, or null. */
    public Layer layer() {
        return layer;
    }

    /** The name used in keys.conf: lower case with dashes, e.g. sort-next. */
    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Action parse(String id) {
        for (Action action : values()) {
            if (action.id().equals(id)) {
                return action;
            }
        }
        return null;
    }
}
