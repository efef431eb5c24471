package dev.infertop.view;

import dev.infertop.model.ProbeCostEstimate;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.CounterFigures;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

/**
 * The counters layer (key c, in place of the operator table): the layer's state, or plainly why it counts
 * nothing (no hardware PMU); the set read; L3 refill bandwidth over the last intervals; and per op the IPC,
 * refills per 1000 instructions, refill bandwidth while it ran, the verdict (thresholds on screen), migrated
 * groups and each event's count.
 */
public final class CountersPanel implements Panel {
    private final Theme theme;

    public CountersPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        LayerStatus status = s.layers().stream().filter(l -> l.layer() == Layer.COUNTERS).findFirst().orElse(null);
        CounterTotals c = s.interval().counters();
        int row = 0;
        theme.apply(g, Theme.Role.HEADING);
        String state = status == null ? "not available in this build" : status.state().label();
        String cost = c.isEmpty() || s.interval().spanNs() <= 0 ? "" : String.format(Locale.ROOT, "  reads ~%.2f%% cpu (est.)",
                100 * ProbeCostEstimate.counterReadsNs(c) / s.interval().spanNs());
        Cells.put(g, 0, row++, " COUNTERS  layer " + state + (c.isEmpty() ? "" : "  set " + c.setName() + ": "
                + String.join(", ", c.events()) + "  line " + c.lineBytes() + " B" + cost), width);
        if (status != null && !status.reason().isEmpty()) {
            theme.apply(g, Theme.Role.WARN);
            Cells.put(g, 0, row++, " " + status.reason(), width);
        } else if (status != null && status.state() == LayerStatus.State.OFF) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, " off: press the counters toggle key (6) or start with --layers ...,counters", width);
        }
        String silentNotice = c.silentNotice();
        if (!silentNotice.isEmpty()) {
            theme.apply(g, Theme.Role.WARN);
            Cells.put(g, 0, row++, " " + silentNotice, width);
        }
        theme.apply(g, Theme.Role.DIM);
        Cells.put(g, 0, row++, " " + CounterFigures.thresholds() + "; per-CPU counts: MIGR groups (thread "
                + "changed CPU) left out, SWTCH groups (thread switched out) may hold other tasks' counts", width);
        if (!c.isEmpty()) {
            theme.apply(g, Theme.Role.NORMAL);
            String label = c.refillsIndex() < 0 ? " L3 refill   (no refills event in this set)"
                    : String.format(Locale.ROOT, " L3 refill %9s/s ", bytes(c.refillBytesPerSecond(s.interval().spanNs())));
            Cells.put(g, 0, row, label, c.refillsIndex() < 0 ? width : Math.min(label.length(), width));
            if (label.length() < width && c.refillsIndex() >= 0) {
                double[] history = c.bandwidthHistory().stream().mapToDouble(Double::doubleValue).toArray();
                Cells.put(g, label.length(), row, Cells.sparkline(history, Math.min(60, width - label.length())),
                        width - label.length());
            }
            row++;
        }
        theme.apply(g, Theme.Role.HEADING);
        StringBuilder heading = new StringBuilder(String.format(Locale.ROOT, "%-18s %7s %5s %5s %6s %8s %10s %-13s",
                "OP", "GROUPS", "MIGR", "SWTCH", "IPC", "REF/1kI", "L3 B/s", "VERDICT"));
        for (String event : c.events()) {
            heading.append(' ').append(Cells.right(shortName(event), 12));
        }
        Cells.put(g, 0, row++, heading.toString(), width);
        List<OpCounters> ops = c.ops();
        for (int i = 0; row < rows; i++, row++) {
            if (i >= ops.size()) {
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, 0, row, i == 0 && c.isEmpty() ? "" : i == 0 ? " (no node group counted this interval)" : "",
                        width);
                continue;
            }
            OpCounters op = ops.get(i);
            CounterFigures.Verdict verdict = c.verdict(op);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-18s %7d %5d %5d %6s %8s %10s %-13s",
                    cut(op.op(), 18), op.groups(), op.migratedGroups(), op.switchedGroups(), number(c.ipc(op), 2),
                    number(c.refillsPerKiloInstruction(op), 1),
                    c.refillsIndex() < 0 ? "-" : bytes(c.refillBytesPerSecond(op)), verdict.label()));
            for (int e = 0; e < c.events().size(); e++) {
                line.append(' ').append(Cells.right(count(op.value(e)), 12));
            }
            theme.apply(g, verdict == CounterFigures.Verdict.MEMORY ? Theme.Role.WARN : Theme.Role.NORMAL);
            Cells.put(g, 0, row, line.toString(), width);
        }
    }

    private static String cut(String text, int width) {
        return text.length() <= width ? text : text.substring(0, width);
    }

    private static String shortName(String event) {
        return event.length() <= 12 ? event : event.substring(0, 12);
    }

    static String number(double value, int decimals) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    /** Bytes with a binary-free SI suffix: 1.2G, 340M, 12k. */
    static String bytes(double value) {
        if (value >= 1e9) {
            return String.format(Locale.ROOT, "%.1fG", value / 1e9);
        }
        if (value >= 1e6) {
            return String.format(Locale.ROOT, "%.1fM", value / 1e6);
        }
        if (value >= 1e3) {
            return String.format(Locale.ROOT, "%.1fk", value / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", value);
    }

    static String count(long value) {
        return value >= 10_000_000_000L ? String.format(Locale.ROOT, "%.2fG", value / 1e9)
                : value >= 10_000_000L ? String.format(Locale.ROOT, "%.2fM", value / 1e6) : Long.toString(value);
    }
}
