package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.BackendBreakdown;
import dev.infertop.model.BackendOps;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

/**
 * Per backend (CPU, BLAS, CUDA, ...): graphs computed, enqueue time (in the compute call) and its share of the
 * interval, nodes; then how the backend's work ended (device-complete time to the synchronize that closed it, or
 * "enqueue only" where none was seen), the host's waits and what was copied into it; under it the backend's ops
 * by time (node counts; "-" where a mixed graph's time cannot be split by op). Below, the tensors the scheduler
 * copied between backends. Opened in place of the operator table; each backend gets an equal share of the rows.
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
                "ENQUEUE ms", "ENQ%", "NODES"), width);
        OffloadTotals offload = s.shown().offload();
        List<OffloadTotals.Copy> copies = offload.copies();
        int copyRows = copies.isEmpty() ? 0 : Math.min(copies.size(), COPY_ROWS) + 1;
        int row = 1;
        if (backends.isEmpty()) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, " no graph computed in this interval (graph layer off, or the target is idle)", width);
        }
        int opRows = backends.isEmpty() ? 0
                : Math.max(1, (rows - 1 - copyRows - 2 * backends.size()) / backends.size());
        for (BackendBreakdown backend : backends) {
            if (row >= rows) {
                break;
            }
            theme.apply(g, Theme.Role.TITLE);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-22s %8d %11s %6.1f%% %9d", backend.backend(),
                    backend.graphs(), OperatorColumn.ms(backend.busyNs() / 1e6),
                    spanNs <= 0 ? 0.0 : 100.0 * backend.busyNs() / spanNs, backend.nodes()), width);
            OffloadTotals.Backend device = offload.backend(backend.backend());
            if (device != null && row < rows) {
                theme.apply(g, device.completion() == OffloadTotals.Completion.ENQUEUE_ONLY ? Theme.Role.DIM
                        : Theme.Role.NORMAL);
                Cells.put(g, 0, row++, "   " + completionLine(device), width);
            }
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
        if (!copies.isEmpty() && row < rows) {
            theme.apply(g, Theme.Role.HEADING);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-28s %-10s %8s %10s %10s", "COPIED TENSOR",
                    "TO", "COPIES", "BYTES", "BYTES/COPY"), width);
            theme.apply(g, Theme.Role.NORMAL);
            for (int i = 0; i < copies.size() && i < COPY_ROWS && row < rows; i++) {
                OffloadTotals.Copy copy = copies.get(i);
                Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-28s %-10s %8d %10s %10d", copy.tensor(),
                        copy.toBackend(), copy.copies(), bytes(copy.bytes()),
                        copy.copies() == 0 ? 0 : copy.bytes() / copy.copies()), width);
            }
        }
        theme.apply(g, Theme.Role.NORMAL);
        Cells.blank(g, row, rows);
    }

    private static final int COPY_ROWS = 4;

    /** How the backend's work ended, the host's waits for it, what was copied into it: one line. */
    static String completionLine(OffloadTotals.Backend b) {
        String end = switch (b.completion()) {
            case DEVICE_COMPLETE -> String.format(Locale.ROOT, "device-complete %s ms over %d graphs (enqueue %s)",
                    OperatorColumn.ms(b.deviceNs() / 1e6), b.completedGraphs(),
                    OperatorColumn.ms(b.completedEnqueueNs() / 1e6));
            case ENQUEUE_ONLY -> "enqueue only: no synchronize of it seen, device time unknown";
            case IN_CALL -> "computes in the call: enqueue is compute";
        };
        return String.format(Locale.ROOT, "%s; host wait %s ms/%d; in %s", end, OperatorColumn.ms(b.waitNs() / 1e6),
                b.waits(), bytes(b.bytesIn()));
    }

    private static String bytes(long bytes) {
        if (bytes >= 10L << 20) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 10L << 10) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
