package dev.infertop.view;

import dev.infertop.model.OpSampleTotals;
import dev.infertop.model.Layer;
import dev.infertop.model.OpTotals;

import java.util.Comparator;
import java.util.Locale;
import java.util.function.BiFunction;

/**
 * The operator table's columns as data, like htop's ProcessFieldData: title, unit, width, alignment, default
 * sort direction, the probe layer the column needs, how to sort, how to format. The table is this list.
 */
public enum OperatorColumn {
    NAME("", "", 0, false, false, Layer.OPERATOR,
            Comparator.comparing(OpTotals::op), (op, span) -> op.op()),
    CALLS_PER_S("CALLS/s", "1/s", 8, true, true, Layer.OPERATOR,
            Comparator.comparingLong(OpTotals::groups), (op, span) -> number(op.groupsPerSecond(span))),
    SHARE("TIME%", "%", 6, true, true, Layer.OPERATOR,
            Comparator.comparingLong(OpTotals::wallNs),
            (op, span) -> String.format(Locale.ROOT, "%.1f", 100 * op.wallFraction(span))),
    /**
     * The op's share of the clock samples that named an op this interval: current between the exact windows
     * too. Sorted and formatted from the snapshot's samples ({@link #now}), not from the row.
     */
    NOW("NOW%", "%", 6, true, true, Layer.OPERATOR, Comparator.comparing(OpTotals::op), (op, span) -> "-"),
    P50("P50ms", "ms", 7, true, true, Layer.OPERATOR,
            Comparator.comparingDouble(op -> op.wall().p50Ms()), (op, span) -> ms(op.wall().p50Ms())),
    P90("P90ms", "ms", 7, true, true, Layer.OPERATOR,
            Comparator.comparingDouble(op -> op.wall().p90Ms()), (op, span) -> ms(op.wall().p90Ms())),
    P99("P99ms", "ms", 7, true, true, Layer.OPERATOR,
            Comparator.comparingDouble(op -> op.wall().p99Ms()), (op, span) -> ms(op.wall().p99Ms())),
    MAX("MAXms", "ms", 7, true, true, Layer.OPERATOR,
            Comparator.comparingDouble(op -> op.wall().maxMs()), (op, span) -> ms(op.wall().maxMs())),
    SHAPE("LAST SHAPE", "", 0, false, false, Layer.OPERATOR,
            Comparator.comparing(OpTotals::lastShape), (op, span) -> op.lastShape());

    /** Width of the name column; the shape column takes what is left. */
    public static final int NAME_WIDTH = 17;

    private final String title;
    private final String unit;
    private final int width;
    private final boolean rightAligned;
    private final boolean descendingByDefault;
    private final Layer layer;
    private final Comparator<OpTotals> order;
    private final BiFunction<OpTotals, Long, String> format;

    OperatorColumn(String title, String unit, int width, boolean rightAligned, boolean descendingByDefault,
                   Layer layer, Comparator<OpTotals> order, BiFunction<OpTotals, Long, String> format) {
        this.title = title;
        this.unit = unit;
        this.width = width;
        this.rightAligned = rightAligned;
        this.descendingByDefault = descendingByDefault;
        this.layer = layer;
        this.order = order;
        this.format = format;
    }

    public String title() {
        return title;
    }

    public String unit() {
        return unit;
    }

    /** Fixed width in columns; 0 for the name (NAME_WIDTH) and shape (the rest). */
    public int width() {
        return width;
    }

    public boolean rightAligned() {
        return rightAligned;
    }

    public boolean descendingByDefault() {
        return descendingByDefault;
    }

    public Layer layer() {
        return layer;
    }

    public Comparator<OpTotals> order() {
        return order;
    }

    public String format(OpTotals op, long spanNs) {
        return format.apply(op, spanNs);
    }

    /** The NOW% cell: the op's sampled share in percent, "-" where no sample named it. */
    static String now(OpSampleTotals sampled, OpTotals op) {
        double share = sampled.shareOf(op.op());
        return Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.1f", 100 * share);
    }

    /** The rows' order for {@code column}: NOW% by the samples' shares, the others by their own. */
    static Comparator<OpTotals> order(OperatorColumn column, OpSampleTotals sampled) {
        if (column != NOW) {
            return column.order();
        }
        return Comparator.comparingDouble(op -> {
            double share = sampled.shareOf(op.op());
            return Double.isNaN(share) ? -1 : share;
        });
    }

    static String ms(double ms) {
        if (ms <= 0) {
            return "-";
        }
        return ms >= 100 ? String.format(Locale.ROOT, "%.0f", ms)
                : ms >= 1 ? String.format(Locale.ROOT, "%.2f", ms) : String.format(Locale.ROOT, "%.3f", ms);
    }

    static String number(double value) {
        if (value >= 1e6) {
            return String.format(Locale.ROOT, "%.1fM", value / 1e6);
        }
        if (value >= 1e4) {
            return String.format(Locale.ROOT, "%.1fk", value / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", value);
    }
}
