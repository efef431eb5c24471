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
 * by time (node counts; "-" where a mixed graph's time cannot be split by op). Below, once a device computed,
 * what stayed on the CPU (its nodes per CPU graph, by tensor) and what moving the rest cost (bytes copied per
 * token, the host's waits); then the tensors the scheduler copied between backends. Opened in place of the operator table; each backend gets an equal share of the rows.
 */
public final class BackendsPanel implements Panel {
    private final Theme theme;

    public BackendsPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        List<BackendBreakdown> backends = BackendBreakdown.of(s.shown());
        long spanNs = s.shown().spanNs();
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, String.format(Locale.ROOT, " %-22s %8s %11s %7s %9s %11s", "BACKEND / OP", "GRAPHS",
                "ENQUEUE ms", "ENQ%", "NODES", "IN/GRAPH"), width);
        OffloadTotals offload = s.shown().offload();
        List<OffloadTotals.Copy> copies = offload.copies();
        int copyRows = copies.isEmpty() ? 0 : Math.min(copies.size(), COPY_ROWS) + 1;
        boolean offloaded = offloaded(offload);
        OffloadTotals.StayedOnCpu stayed = offload.stayedOnCpu();
        int stayedRows = !offloaded ? 0 : 2 + Math.max(1, Math.min(stayed.nodes().size(), STAYED_ROWS));
        copyRows += stayedRows;
        int row = 1;
        if (backends.isEmpty()) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, " no graph computed in this interval (graph layer off, or the target is idle)", width);
        }
        int opRows = backends.isEmpty() ? 0
                : Math.max(1, (rows - 1 - copyRows - 3 * backends.size()) / backends.size());
        for (BackendBreakdown backend : backends) {
            if (row >= rows) {
                break;
            }
            theme.apply(g, Theme.Role.TITLE);
            OffloadTotals.Backend device = offload.backend(backend.backend());
            // Bytes copied in per graph of this backend: the cost of each step of its split ("-": none copied in;
            // blank without the offload figures).
            String inPerGraph = device == null ? "" : offload.copiesUnseen(device) ? "unseen"
                    : device.graphs() == 0 || device.copiesIn() == 0 ? "-"
                    : bytes(Math.round(device.bytesInPerGraph()));
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-22s %8d %11s %6.1f%% %9d %11s", backend.backend(),
                    backend.graphs(), OperatorColumn.ms(backend.busyNs() / 1e6),
                    spanNs <= 0 ? 0.0 : 100.0 * backend.busyNs() / spanNs, backend.nodes(), inPerGraph), width);
            if (device != null && row < rows) {
                theme.apply(g, device.completion() == OffloadTotals.Completion.ENQUEUE_ONLY ? Theme.Role.DIM
                        : Theme.Role.NORMAL);
                Cells.put(g, 0, row++, "   " + completionLine(device), width);
            }
            if (device != null && device.completion() != OffloadTotals.Completion.IN_CALL && row < rows) {
                theme.apply(g, backend.dispatch() == null ? Theme.Role.DIM : Theme.Role.NORMAL);
                Cells.put(g, 0, row++, "   " + dispatchLine(backend.dispatch()), width);
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
                long fused = fusedNodes(backend.dispatch(), op.op());
                Cells.put(g, 0, row++, String.format(Locale.ROOT, "   %-20s %8s %11s %s %9d%s", op.op(), "",
                        time, share, op.nodes(), fused > 0 ? "  " + fused + " fused" : ""), width);
            }
        }
        if (offloaded && row < rows) {
            row = drawStayed(g, row, rows, width, offload);
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
    private static final int STAYED_ROWS = 4;

    /** Whether a backend that does not compute in the call (a device) computed graphs. */
    private static boolean offloaded(OffloadTotals offload) {
        for (OffloadTotals.Backend b : offload.backends()) {
            if (b.completion() != OffloadTotals.Completion.IN_CALL && b.graphs() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Which nodes stayed on the CPU (per CPU graph), then one line of what moving the rest cost. */
    private int drawStayed(TextGraphics g, int row, int rows, int width, OffloadTotals offload) {
        OffloadTotals.StayedOnCpu stayed = offload.stayedOnCpu();
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-28s %-10s %-16s %9s", "STAYED ON THE CPU",
                "OP", "SHAPE", "PER GRAPH"), width);
        theme.apply(g, Theme.Role.NORMAL);
        if (stayed.cpuGraphs() == 0 && row < rows) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, "   (no CPU graph read since a device computed: nodes need the operator layer)",
                    width);
        }
        for (int i = 0; i < stayed.nodes().size() && i < STAYED_ROWS && row < rows; i++) {
            OffloadTotals.StayedOnCpu.Node node = stayed.nodes().get(i);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-28s %-10s %-16s %9.2f", node.tensor(), node.op(),
                    node.shape(), stayed.runsPerGraph(node)), width);
        }
        if (row < rows) {
            Cells.put(g, 0, row++, "   " + costLine(offload), width);
        }
        return row;
    }

    /** What moving the rest off the CPU cost: bytes copied per token, the host's waits for the devices. */
    static String costLine(OffloadTotals offload) {
        OffloadTotals.TokenBytes t = offload.perToken();
        long waitNs = 0;
        long waits = 0;
        for (OffloadTotals.Backend b : offload.backends()) {
            if (b.completion() != OffloadTotals.Completion.IN_CALL) {
                waitNs += b.waitNs();
                waits += b.waits();
            }
        }
        String prompt = t.promptTokens() == 0 ? "-" : String.format(Locale.ROOT, "%.0f B", t.bytesPerPromptToken());
        String generated = t.generatedTokens() == 0 ? "-"
                : String.format(Locale.ROOT, "%.0f B", t.bytesPerGeneratedToken());
        List<String> unseen = offload.backendsWithCopiesUnseen();
        String tokens = !unseen.isEmpty() ? "copies into " + String.join(", ", unseen)
                + " unseen (its own copy not probed: stripped?)"
                : t.promptTokens() + t.generatedTokens() == 0 ? "copied per token: no llama_decode seen"
                : "copied per prompt token " + prompt + ", per generated token " + generated;
        return String.format(Locale.ROOT, "cost: %s; device waits %s ms/%d", tokens,
                OperatorColumn.ms(waitNs / 1e6), waits);
    }

    /** The host's node-by-node dispatch of a device backend's graphs, or what is missing to see it. */
    static String dispatchLine(BackendOps.NodeDispatch d) {
        if (d == null) {
            return "host dispatch per node: not seen (only Vulkan's, where its library keeps its symbol table)";
        }
        if (d.graphs() == 0) {
            return "host dispatch per node: no graph followed in this span (only in the operator layer's windows)";
        }
        return String.format(Locale.ROOT, "host dispatch: %d dispatches, %d nodes fused into them, over %d graphs "
                + "followed node by node", d.dispatches(), d.fusedNodes(), d.graphs());
    }

    private static long fusedNodes(BackendOps.NodeDispatch d, String op) {
        if (d == null) {
            return 0;
        }
        for (BackendOps.OpDispatch o : d.ops()) {
            if (o.op().equals(op)) {
                return o.fused();
            }
        }
        return 0;
    }

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
