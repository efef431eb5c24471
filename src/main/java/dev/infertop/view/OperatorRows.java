package dev.infertop.view;

import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.Snapshot;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** The operator table's rows as the user chose them: by op or tensor group, filtered, sorted. */
public final class OperatorRows {
    private OperatorRows() {}

    /** The snapshot's span the rows cover: the interval, or the whole run for a final snapshot. */
    public static long spanNs(Snapshot s) {
        return s.shown().spanNs();
    }

    public static List<OpTotals> of(Snapshot s, UiState ui) {
        OperatorTotals operators = s.shown().operators();
        List<OpTotals> source = ui.rows == UiState.Rows.OPS ? operators.ops() : operators.tensorGroups();
        List<OpTotals> rows = new ArrayList<>();
        String pattern = ui.filter.toLowerCase(Locale.ROOT);
        for (OpTotals op : source) {
            if (op.groups() == 0) {
                continue; // not seen this interval
            }
            if (pattern.isEmpty() || op.op().toLowerCase(Locale.ROOT).contains(pattern)
                    || op.lastShape().toLowerCase(Locale.ROOT).contains(pattern)) {
                rows.add(op);
            }
        }
        Comparator<OpTotals> order = OperatorColumn.order(ui.sortColumn, operators.sampled());
        if (ui.sortDescending) {
            order = order.reversed();
        }
        rows.sort(order.thenComparing(OpTotals::op));
        return rows;
    }

    /** The selected row after the rows changed: the same name if still there, else the same position. */
    public static int selectedIndex(List<OpTotals> rows, UiState ui) {
        if (rows.isEmpty()) {
            return 0;
        }
        if (ui.selectedName != null) {
            for (int i = 0; i < rows.size(); i++) {
                if (rows.get(i).op().equals(ui.selectedName)) {
                    return i;
                }
            }
        }
        return Math.max(0, Math.min(ui.selectedIndex, rows.size() - 1));
    }
}
