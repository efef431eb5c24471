package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

/**
 * The selected row's wall time per group as a percentile plot: one bar per percentile, length proportional to
 * the value (HdrHistogram, the interval's histogram).
 */
public final class LatencyPanel implements Panel {
    public static final int ROWS = 1 + LatencyDistribution.PLOT_PERCENTILES.length;

    private final Theme theme;

    public LatencyPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        List<OpTotals> list = OperatorRows.of(s, ui);
        OpTotals op = list.isEmpty() ? null : list.get(OperatorRows.selectedIndex(list, ui));
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, op == null ? " LATENCY  (no row selected)"
                : String.format(Locale.ROOT, " LATENCY  %s  wall time per group, %d groups, percentile plot",
                op.op(), op.wall().count()), width);
        LatencyDistribution d = op == null ? LatencyDistribution.EMPTY : op.distribution();
        double max = d.size() == 0 ? 0 : d.valueMs(d.size() - 1);
        int barWidth = Math.max(0, width - 24);
        for (int i = 0; i < rows - 1; i++) {
            int row = i + 1;
            if (i >= d.size()) {
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, 0, row, "", width);
                continue;
            }
            String label = String.format(Locale.ROOT, " p%-7s %10s ms ", percentileLabel(d.percentile(i)),
                    OperatorColumn.ms(d.valueMs(i)));
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, row, label, Math.min(label.length(), width));
            int bar = max <= 0 ? 0 : (int) Math.round(d.valueMs(i) / max * barWidth);
            theme.apply(g, d.percentile(i) >= 99 ? Theme.Role.WARN : Theme.Role.GOOD);
            if (label.length() < width) {
                Cells.put(g, label.length(), row, "#".repeat(Math.max(bar, d.valueMs(i) > 0 ? 1 : 0)),
                        width - label.length());
            }
        }
    }

    static String percentileLabel(double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }
}
