package dev.infertop.view;

import dev.infertop.model.Layer;
import dev.infertop.model.OpSampleTotals;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;

import java.util.List;

/**
 * Operator rows (by op, or by tensor group), one column per {@link OperatorColumn}: a heading line naming the
 * sort column (▼ descending, ▲ ascending), then the rows that fit, the selected one highlighted.
 */
public final class OperatorTablePanel implements Panel {
    private final Theme theme;

    public OperatorTablePanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        List<OpTotals> list = OperatorRows.of(s, ui);
        long spanNs = OperatorRows.spanNs(s);
        theme.apply(g, Theme.Role.HEADING);
        String held = s.isFinal() ? "" : s.budget().heldWindowText();
        OpSampleTotals sampled = s.shown().operators().sampled();
        Cells.put(g, 0, 0, held.isEmpty() ? line(null, ui, width, spanNs, sampled)
                : line(null, ui, width, spanNs, sampled).stripTrailing() + "  (" + held + "; NOW% sampled)", width);
        int visible = rows - 1;
        int selected = OperatorRows.selectedIndex(list, ui);
        if (selected < ui.scroll) {
            ui.scroll = selected;
        } else if (selected >= ui.scroll + visible) {
            ui.scroll = selected - visible + 1;
        }
        ui.scroll = Math.max(0, Math.min(ui.scroll, Math.max(0, list.size() - visible)));
        for (int i = 0; i < visible; i++) {
            int index = ui.scroll + i;
            if (index >= list.size()) {
                theme.apply(g, Theme.Role.DIM);
                Cells.put(g, 0, i + 1, i == 0 && list.isEmpty() ? emptyReason(s, ui) : "", width);
                continue;
            }
            theme.apply(g, index == selected ? Theme.Role.SELECTED : Theme.Role.NORMAL);
            Cells.put(g, 0, i + 1, line(list.get(index), ui, width, spanNs, sampled), width);
        }
    }

    private static String emptyReason(Snapshot s, UiState ui) {
        for (LayerStatus layer : s.layers()) {
            if (layer.layer() == Layer.OPERATOR && layer.state() != LayerStatus.State.ON
                    && layer.state() != LayerStatus.State.PARTIAL) {
                return "  operator layer " + layer.state().label()
                        + (layer.reason().isEmpty() ? "" : ": " + layer.reason());
            }
        }
        return ui.filter.isEmpty() ? "  no CPU graph node this interval" : "  no row matches /" + ui.filter;
    }

    /** One table line: the heading when {@code op} is null. */
    static String line(OpTotals op, UiState ui, int width, long spanNs, OpSampleTotals sampled) {
        StringBuilder text = new StringBuilder();
        for (OperatorColumn column : OperatorColumn.values()) {
            String cell;
            if (op == null) {
                cell = column == OperatorColumn.NAME ? ui.rows.title : column.title();
                if (column == ui.sortColumn) {
                    cell = cell + (ui.sortDescending ? "▼" : "▲");
                }
            } else {
                cell = column == OperatorColumn.NOW ? OperatorColumn.now(sampled, op) : column.format(op, spanNs);
            }
            int columnWidth = switch (column) {
                case NAME -> OperatorColumn.NAME_WIDTH;
                case SHAPE -> Math.max(0, width - text.length() - 1);
                default -> column.width();
            };
            text.append(column.rightAligned() ? Cells.right(cell, columnWidth) : Cells.fit(cell, columnWidth))
                    .append(' ');
        }
        return text.toString();
    }
}
