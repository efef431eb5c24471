package dev.infertop.view;

import dev.infertop.model.HitCost;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Interferer;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Other;
import dev.infertop.model.ProbeCostEstimate;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The sched layer's panel (key t), in place of the operator table: each target thread's share of time
 * running, runnable (waiting for a CPU) and sleeping; the tasks that ran on a CPU while a thread waited for
 * it, worst first; off-CPU time per op. The heading carries the layer's cost.
 */
public final class SchedPanel implements Panel {
    private final Theme theme;

    public SchedPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        SchedTotals sched = s.shown().sched();
        long spanNs = OperatorRows.spanNs(s);
        List<Line> lines = new ArrayList<>();
        lines.add(new Line(Theme.Role.HEADING, heading(sched, spanNs, s.budget().hitCost())));
        String off = offReason(s);
        if (off != null) {
            lines.add(new Line(Theme.Role.DIM, "  sched layer " + off));
        } else {
            lines.add(new Line(Theme.Role.TITLE, String.format(Locale.ROOT, "  %-8s %6s %6s %6s %9s %9s",
                    "TID", "RUN%", "WAIT%", "SLEEP%", "SWITCHES", "PREEMPTED")));
            for (SchedThreadTotals t : sched.threads()) {
                double total = Math.max(1, t.totalNs());
                lines.add(new Line(t.runnableFraction() >= 0.25 ? Theme.Role.WARN : Theme.Role.NORMAL,
                        String.format(Locale.ROOT, "  %-8s %6.1f %6.1f %6.1f %9d %9d", Other.tid(t.tid()),
                                100 * t.runningNs() / total, 100 * t.runnableNs() / total,
                                100 * t.sleepingNs() / total, t.switches(), t.preemptions())));
            }
            if (sched.threads().isEmpty()) {
                lines.add(new Line(Theme.Role.DIM, "  no thread of the target left or took a CPU this interval"));
            }
            lines.add(new Line(Theme.Role.TITLE, String.format(Locale.ROOT, "  %-8s %-22s %10s %8s",
                    "PID", "RAN WHILE WAITED", "ms", "OF WAIT")));
            for (Interferer culprit : sched.interferers()) {
                lines.add(new Line(culprit == sched.worstInterferer() ? Theme.Role.WARN : Theme.Role.NORMAL,
                        String.format(Locale.ROOT, "  %-8d %-22s %10.1f %7.1f%%", culprit.pid(),
                                culprit.comm() + (culprit.sameProcess() ? " (self)" : ""), culprit.ns() / 1e6,
                                100 * sched.waitShare(culprit))));
            }
            if (sched.otherInterferersNs() > 0) {
                lines.add(new Line(Theme.Role.NORMAL, String.format(Locale.ROOT, "  %-8s %-22s %10.1f", Other.NAME,
                        "(the rest)", sched.otherInterferersNs() / 1e6)));
            }
            if (sched.interferers().isEmpty() && sched.otherInterferersNs() == 0) {
                lines.add(new Line(Theme.Role.DIM, "  nothing ran on a CPU a target thread was waiting for"));
            }
            if (!sched.ops().isEmpty()) {
                lines.add(new Line(Theme.Role.TITLE, String.format(Locale.ROOT, "  %-26s %12s %12s",
                        "OFF-CPU BY OP", "RUNNABLE ms", "SLEEPING ms")));
                for (SchedOpTotals op : sched.ops()) {
                    lines.add(new Line(Theme.Role.NORMAL, String.format(Locale.ROOT, "  %-26s %12.1f %12.1f",
                            op.op(), op.runnableNs() / 1e6, op.sleepingNs() / 1e6)));
                }
            }
        }
        for (int row = 0; row < rows; row++) {
            Line line = row < lines.size() ? lines.get(row) : new Line(Theme.Role.NORMAL, "");
            theme.apply(g, line.role());
            Cells.put(g, 0, row, line.text(), width);
        }
    }

    private record Line(Theme.Role role, String text) {}

    /** The panel's first line: the layer's records and runs, and its cost ("(guess)" where no run was measured). */
    public static String heading(SchedTotals sched, long spanNs, HitCost hit) {
        double seconds = spanNs / 1e9;
        double recordsPerSecond = seconds <= 0 ? 0 : (sched.offRecords() + sched.culpritRecords()) / seconds;
        double cost = spanNs <= 0 ? 0 : ProbeCostEstimate.schedNs(sched, hit) / spanNs;
        return String.format(Locale.ROOT, "THREAD STATES (runnable = waiting for a CPU)  sched %.0f rec/s, "
                + "%.0f hits/s, ~%.2f%% cpu (%s)", recordsPerSecond,
                seconds <= 0 ? 0 : sched.kernelHits() / seconds, 100 * cost, hit.tracepointMeasured() ? "est." : "guess");
    }

    /** Why the panel has nothing to show ("off: switched off live"), or null when the layer runs. */
    private static String offReason(Snapshot s) {
        for (LayerStatus layer : s.layers()) {
            if (layer.layer() == Layer.SCHED) {
                if (layer.state() == LayerStatus.State.ON || layer.state() == LayerStatus.State.PARTIAL) {
                    return null;
                }
                return layer.state().label() + (layer.reason().isEmpty() ? "" : ": " + layer.reason());
            }
        }
        return "not in this session";
    }

    /** The worst interferer for the header: "hog (777) ran 82% of the wait", or "" when none. */
    public static String worstLabel(Snapshot s) {
        SchedTotals sched = s.shown().sched();
        Interferer worst = sched.worstInterferer();
        if (worst == null) {
            return "";
        }
        return String.format(Locale.ROOT, "cpu thief %s (%d)%s %.0f%% of wait", worst.comm(), worst.pid(),
                worst.sameProcess() ? " self" : "", 100 * sched.waitShare(worst));
    }
}
