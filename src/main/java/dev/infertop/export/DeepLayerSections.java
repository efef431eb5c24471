package dev.infertop.export;

import dev.infertop.model.Other;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Interferer;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

import static dev.infertop.export.HtmlReportWriter.escape;

/**
 * report.html's sections for the sched and counters layers: per thread a bar of running / runnable /
 * sleeping shares with the top interferers under it; per op the IPC, refills per 1k instructions and the
 * verdict as a table. A layer that was off says "not recorded in this run"; one that could not count (no
 * hardware PMU) says why, plainly.
 */
final class DeepLayerSections {
    static final String RUNNING_COLOR = "#2ca02c";
    static final String RUNNABLE_COLOR = "#d62728";
    static final String SLEEPING_COLOR = "#999999";
    static final int BAR_HEIGHT = 18;
    static final int LABEL_WIDTH = 120;
    static final int TOP_INTERFERERS = 5;

    private DeepLayerSections() {}

    static LayerStatus status(Snapshot s, Layer layer) {
        return s.layers().stream().filter(l -> l.layer() == layer).findFirst().orElse(null);
    }

    private static boolean on(LayerStatus status) {
        return status != null
                && (status.state() == LayerStatus.State.ON || status.state() == LayerStatus.State.PARTIAL);
    }

    /** A layer that was asked for but could not record: its reason as the section's text; null otherwise. */
    private static String unavailable(LayerStatus status) {
        if (status == null || status.state() != LayerStatus.State.UNAVAILABLE || status.reason().isEmpty()) {
            return null;
        }
        return "<p class=\"absent\">" + escape(status.reason()) + "</p>";
    }

    /** One bar per thread (100 % of its time: running, runnable, sleeping), then the top interferers. */
    static String threadStates(SnapshotContent content) {
        Snapshot s = content.last();
        LayerStatus status = status(s, Layer.SCHED);
        if (!on(status)) {
            return unavailable(status);
        }
        SchedTotals sched = s.total().sched();
        List<SchedThreadTotals> threads = sched.threads().stream().filter(t -> t.totalNs() > 0).toList();
        if (threads.isEmpty()) {
            return null;
        }
        int barWidth = HtmlReportWriter.WIDTH - LABEL_WIDTH - 10;
        int height = (threads.size() + 1) * (BAR_HEIGHT + 6) + 10;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "viewBox=\"0 0 %d %d\"><g class=\"plot-area\">\n",
                HtmlReportWriter.WIDTH, height, HtmlReportWriter.WIDTH, height));
        int y = 4;
        for (SchedThreadTotals t : threads) {
            double total = t.totalNs();
            double x = LABEL_WIDTH;
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>",
                    LABEL_WIDTH - 6, y + BAR_HEIGHT - 5, escape(label(content, t.tid()))));
            for (long[] part : new long[][] {{t.runningNs(), 0}, {t.runnableNs(), 1}, {t.sleepingNs(), 2}}) {
                double w = barWidth * part[0] / total;
                svg.append(String.format(Locale.ROOT,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", x, y, w, BAR_HEIGHT,
                        part[1] == 0 ? RUNNING_COLOR : part[1] == 1 ? RUNNABLE_COLOR : SLEEPING_COLOR));
                x += w;
            }
            svg.append(String.format(Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\">running %.1f%% runnable %.1f%% sleeping %.1f%%</text>\n",
                    LABEL_WIDTH + 4, y + BAR_HEIGHT + 12 - BAR_HEIGHT / 2 + 2, 100 * t.runningNs() / total,
                    100 * t.runnableNs() / total, 100 * t.sleepingNs() / total));
            y += BAR_HEIGHT + 6;
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">"
                + "<tspan fill=\"%s\">■ running</tspan> <tspan fill=\"%s\">■ runnable (waiting for a CPU)</tspan> "
                + "<tspan fill=\"%s\">■ sleeping</tspan></text>\n", y + 14, RUNNING_COLOR, RUNNABLE_COLOR,
                SLEEPING_COLOR));
        svg.append("</g></svg>\n");
        svg.append(interferers(sched));
        return svg.toString();
    }

    private static String label(SnapshotContent content, int tid) {
        if (tid == Other.TID) {
            return "other threads";
        }
        String comm = content.threadNames().get(tid);
        return comm == null ? "thread " + tid : comm + " " + tid;
    }

    private static String interferers(SchedTotals sched) {
        if (sched.interferers().isEmpty()) {
            return "<p>No task ran on a CPU while a traced thread waited for it.</p>\n";
        }
        StringBuilder table = new StringBuilder("<table class=\"interferers\"><caption>Top interferers (ran on a CPU "
                + "while a traced thread waited for it)</caption>\n<tr><th>pid</th><th>comm</th><th>ms</th>"
                + "<th>share of the wait</th></tr>\n");
        for (Interferer c : sched.interferers().stream().limit(TOP_INTERFERERS).toList()) {
            table.append(String.format(Locale.ROOT, "<tr><td>%d</td><td>%s%s</td><td>%.3f</td><td>%.1f%%</td></tr>\n",
                    c.pid(), escape(c.comm()), c.sameProcess() ? " (target)" : "", c.ns() / 1e6,
                    100 * sched.waitShare(c)));
        }
        if (sched.otherInterferersNs() > 0) {
            table.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>(the rest)</td><td>%.3f</td><td></td></tr>\n",
                    Other.NAME, sched.otherInterferersNs() / 1e6));
        }
        return table.append("</table>\n").toString();
    }

    /** Per op: groups, IPC, refills per 1k instructions, verdict (n/a where the set lacks the events). */
    static String counters(SnapshotContent content) {
        Snapshot s = content.last();
        LayerStatus status = status(s, Layer.COUNTERS);
        if (!on(status)) {
            return unavailable(status);
        }
        CounterTotals c = s.total().counters();
        if (c.isEmpty() || c.ops().isEmpty()) {
            return null;
        }
        StringBuilder table = new StringBuilder();
        table.append("<p>set ").append(escape(c.setName())).append(": ").append(escape(String.join(", ", c.events())));
        if (c.refillsIndex() >= 0) {
            table.append(String.format(Locale.ROOT, " &middot; L3 refills %.1f MB/s over the run",
                    c.refillBytesPerSecond(s.total().spanNs()) / 1e6));
        }
        if (!status.reason().isEmpty()) {
            table.append(" &middot; ").append(escape(status.reason()));
        }
        table.append("</p>\n<table class=\"counters\"><tr><th>op</th><th>groups</th><th>IPC</th>"
                + "<th>refills / 1k instr.</th><th>verdict</th></tr>\n");
        for (OpCounters op : c.ops()) {
            table.append("<tr><td>").append(escape(op.op())).append("</td><td>").append(op.groups())
                    .append("</td><td>").append(figure(c.ipc(op))).append("</td><td>")
                    .append(figure(c.refillsPerKiloInstruction(op))).append("</td><td>")
                    .append(escape(c.verdict(op).label())).append("</td></tr>\n");
        }
        return table.append("</table>\n").toString();
    }

    private static String figure(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%.3f", value);
    }
}
