package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.BackendBreakdown;
import dev.infertop.model.BackendOps;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

/**
 * Per backend (CPU, BLAS, CUDA, ...): graphs computed, busy time and its share of the interval, nodes, and
 * under it the backend's ops by time (node counts; "-" where a mixed graph's time cannot be split by op).
 * Opened in place of the operator table; each backend gets an equal share of the rows.
 */
public final class BackendsPanel implements Panel {
    private final Theme theme;

    public BackendsPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, Snapshot s, UiState ui) {
        int width = g.getSize().getColumns();
        int rows = g.getSize().getRows();
        if (rows <= 0) {
            return;
        }
        List<BackendBreakdown> backends = BackendBreakdown.of(s.shown());
        long spanNs = s.shown().spanNs();
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, String.format(Locale.ROOT, " %-22s %8s %11s %7s %9s", "BACKEND / OP", "GRAPHS",
                "BUSY ms", "BUSY%", "NODES"), width);
        int row = 1;
        if (backends.isEmpty()) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, " no graph computed in this interval (graph layer off, or the target is idle)", width);
        }
        int opRows = backends.isEmpty() ? 0 : Math.max(1, (rows - 1 - backends.size()) / backends.size());
        for (BackendBreakdown backend : backends) {
            if (row >= rows) {
                break;
            }
            theme.apply(g, Theme.Role.TITLE);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-22s %8d %11s %6.1f%% %9d", backend.backend(),
                    backend.graphs(), OperatorColumn.ms(backend.busyNs() / 1e6),
                    spanNs <= 0 ? 0.0 : 100.0 * backend.busyNs() / spanNs, backend.nodes()), width);
            List<BackendOps.Op> ops = backend.ops();
            theme.apply(g, Theme.Role.NORMAL);
            if (ops.isEmpty() && row < rows) {
                theme.apply(g, Theme.Role.DIM);
                Cells.put(g, 0, row++, backend.backend().equals(BackendBreakdown.CPU)
                        ? "   (ops: operator layer off)" : "   (ops: counted while the operator layer is on)", width);
                continue;
            }
            for (int i = 0; i < ops.size() && i < opRows && row < rows; i++) {
                BackendOps.Op op = ops.get(i);
                String time = op.timed() ? OperatorColumn.ms(op.timeNs() / 1e6) : "-";
                String share = op.timed() && backend.busyNs() > 0
                        ? String.format(Locale.ROOT, "%6.1f%%", 100.0 * op.timeNs() / backend.busyNs()) : "      -";
                Cells.put(g, 0, row++, String.format(Locale.ROOT, "   %-20s %8s %11s %s %9d", op.op(), "",
                        time, share, op.nodes()), width);
            }
        }
        theme.apply(g, Theme.Role.NORMAL);
        Cells.blank(g, row, rows);
    }
}
