package dev.infertop.diff;

import dev.infertop.model.HistogramTag;
import dev.infertop.model.JsonSchema;
import dev.infertop.export.HtmlReportWriter;
import dev.infertop.model.LatencyDistribution;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

import static dev.infertop.export.HtmlReportWriter.COLORS;
import static dev.infertop.export.HtmlReportWriter.escape;

/**
 * The diff as one self-contained page in the style of a snapshot's report.html (inline CSS and SVG, no script):
 * what differs, A's and B's time per generated token per op type side by side, the per-interval samples the rank
 * test compared (decode, and the ops that moved most), TPOT percentiles of both runs when both are snapshots, and
 * the text's tables.
 */
public final class DiffHtml {
    static final int WIDTH = 560;
    static final int BAR_ROW = 18;
    static final int MAX_BARS = 14;
    static final String COLOR_A = COLORS[1];
    static final String COLOR_B = COLORS[0];

    private DiffHtml() {}

    public static String html(RunDiff diff) {
        StringBuilder page = new StringBuilder(HtmlReportWriter.head("infertop diff: " + diff.a().run().path() + " -> "
                + diff.b().run().path()));
        page.append("<h1 style=\"font-size:18px\">infertop diff</h1>\n<p>A <b style=\"color:").append(COLOR_A)
                .append("\">").append(escape(DiffText.side(diff.runsA()))).append("</b> &rarr; B <b style=\"color:")
                .append(COLOR_B).append("\">").append(escape(DiffText.side(diff.runsB()))).append("</b></p>\n");
        page.append("<table><tr><th>differs</th><th>A</th><th>B</th></tr>\n");
        for (Identity.Property property : diff.identity().differs()) {
            page.append("<tr><td>").append(escape(property.name())).append("</td><td>").append(escape(property.a()))
                    .append("</td><td>").append(escape(property.b())).append("</td></tr>\n");
        }
        if (diff.identity().differs().isEmpty()) {
            page.append("<tr><td>nothing recorded</td><td></td><td></td></tr>\n");
        }
        page.append("</table>\n");
        for (String note : diff.identity().notes()) {
            page.append("<p>note: ").append(escape(note)).append("</p>\n");
        }
        section(page, "Time per generated token by op type: A (blue) beside B (red)", opBars(diff));
        // B before A in the line plots: the plots' first colour is red, B's in the bars.
        if (diff.betweenRuns()) {
            section(page, "Decode time per generated token, run by run (what the rank test compares)",
                    intervals(List.of(perRun(diff.runsB()), perRun(diff.runsA())), List.of("B decode", "A decode"),
                            "run"));
        } else {
            section(page, "Decode time per generated token, interval by interval (what the rank test compares)",
                    intervals(List.of(diff.b().series(HistogramTag.TPOT, stepsPerToken(diff.b())),
                            diff.a().series(HistogramTag.TPOT, stepsPerToken(diff.a()))), List.of("B decode", "A decode"),
                            "seconds into the run"));
        }
        section(page, "The biggest movers' time per generated token, interval by interval", movers(diff));
        section(page, "TPOT percentiles of A and B (latency.hlog)", tpotPercentiles(diff));
        page.append("<h2>Tokens</h2>\n<table><tr><th></th><th>A</th><th>B</th><th>change</th><th>p (adjusted)</th>"
                + "</tr>\n");
        for (Change rate : diff.rates()) {
            row(page, rate.name() + " (" + rate.unit() + ")", rate, diff.largePercent());
        }
        page.append("</table>\n<h2>Time per generated token by op type (ms)</h2>\n<table><tr><th>op</th><th>A</th>"
                + "<th>B</th><th>change</th><th>p (adjusted)</th><th>calls/token</th><th>GB/s</th><th>verdict</th>"
                + "</tr>\n");
        for (RunDiff.OpChange op : diff.ops()) {
            row(page, op.op(), op.time(), diff.largePercent());
            page.setLength(page.length() - "</tr>\n".length());
            page.append("<td>").append(DiffText.pair(op.a() == null ? Double.NaN : op.a().callsPerToken(),
                            op.b() == null ? Double.NaN : op.b().callsPerToken(), "%.1f")).append("</td><td>")
                    .append(DiffText.pair(op.a() == null ? Double.NaN : op.a().gbPerS(),
                            op.b() == null ? Double.NaN : op.b().gbPerS(), "%.2f")).append("</td><td>")
                    .append(escape(DiffText.verdict(op.a()) + " > " + DiffText.verdict(op.b()))).append("</td></tr>\n");
        }
        row(page, diff.outside().name(), diff.outside(), diff.largePercent());
        row(page, "total", diff.total(), diff.largePercent());
        page.append("</table>\n");
        for (String line : DiffText.undecidedLines(diff)) {
            page.append("<p><b>").append(escape(line)).append("</b></p>\n");
        }
        page.append("<p>").append(escape(DiffText.summary(diff))).append("</p>\n");
        return page.append("</body></html>\n").toString();
    }

    private static double stepsPerToken(RunMetrics run) {
        return run.tokensDecode() == 0 ? 0 : run.totals().path(JsonSchema.TPOT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asDouble() / run.tokensDecode();
    }

    private static void section(StringBuilder page, String title, String svg) {
        page.append("<section><h2>").append(escape(title)).append("</h2>\n");
        page.append(svg == null ? "<p class=\"absent\">not recorded in these runs</p>" : svg).append("</section>\n");
    }

    private static void row(StringBuilder page, String name, Change change, double largePercent) {
        page.append("<tr><td>").append(escape(name)).append("</td><td>").append(DiffText.value(change, change.a()))
                .append("</td><td>").append(DiffText.value(change, change.b())).append("</td><td>")
                .append(DiffText.percent(change.deltaPercent())).append("</td><td>")
                .append(escape(DiffText.p(change, largePercent))).append("</td></tr>\n");
    }

    /** Paired horizontal bars, one pair per op (the largest first), on one scale. */
    static String opBars(RunDiff diff) {
        List<RunDiff.OpChange> ops = diff.ops().stream()
                .sorted(Comparator.comparingDouble((RunDiff.OpChange o) -> -Math.max(o.time().a(), o.time().b())))
                .limit(MAX_BARS).toList();
        if (ops.isEmpty()) {
            return null;
        }
        double max = ops.stream().mapToDouble(o -> Math.max(o.time().a(), o.time().b())).max().orElse(1);
        max = Math.max(max, 1e-9);
        int left = 130;
        int right = 110;
        int height = 10 + ops.size() * 2 * BAR_ROW;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT, "<svg class=\"plot bars\" xmlns=\"http://www"
                + ".w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", WIDTH, height, WIDTH, height));
        int y = 5;
        for (RunDiff.OpChange op : ops) {
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", left - 6,
                    y + BAR_ROW + 4, escape(DiffText.clip(op.op(), 20))));
            bar(svg, left, y, (WIDTH - left - right) * op.time().a() / max, COLOR_A, op.time().a(), "A " + op.op());
            bar(svg, left, y + BAR_ROW, (WIDTH - left - right) * op.time().b() / max, COLOR_B, op.time().b(),
                    "B " + op.op());
            y += 2 * BAR_ROW;
        }
        return svg.append("</svg>\n").toString();
    }

    private static void bar(StringBuilder svg, int x, int y, double width, String color, double ms, String title) {
        svg.append(String.format(Locale.ROOT, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                        + "fill=\"%s\"><title>%s: %.4f ms per token</title></rect><text x=\"%.1f\" y=\"%d\">%.4f ms</text>\n",
                x, y + 2, Math.max(width, 0.5), BAR_ROW - 4, color, escape(title), ms, x + Math.max(width, 0.5) + 4,
                y + BAR_ROW - 5, ms));
    }

    /** Each run's decode time per generated token, against its number on its side. */
    private static List<double[]> perRun(List<RunMetrics> runs) {
        List<double[]> points = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            RunMetrics run = runs.get(i);
            if (run.tokensDecode() > 0 && run.decodeTokensPerSecond() > 0) {
                points.add(new double[] {i + 1, 1000 / run.decodeTokensPerSecond()});
            }
        }
        return points;
    }

    private static String intervals(List<List<double[]>> series, List<String> names, String xLabel) {
        List<double[][]> kept = new ArrayList<>();
        List<String> keptNames = new ArrayList<>();
        for (int i = 0; i < series.size(); i++) {
            if (!series.get(i).isEmpty()) {
                kept.add(series.get(i).toArray(double[][]::new));
                keptNames.add(names.get(i));
            }
        }
        if (kept.isEmpty()) {
            return null;
        }
        return HtmlReportWriter.linePlot(kept, keptNames, xLabel, "ms per generated token", true, false);
    }

    /** The three ops that moved most, A and B, each interval's time per generated token. */
    private static String movers(RunDiff diff) {
        List<List<double[]>> series = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (RunDiff.OpChange op : diff.ops().stream().limit(3).toList()) {
            if (op.a() != null) {
                series.add(diff.a().series(RunLoader.opTag(op.op()), op.a().callsPerToken()));
                names.add("A " + op.op());
            }
            if (op.b() != null) {
                series.add(diff.b().series(RunLoader.opTag(op.op()), op.b().callsPerToken()));
                names.add("B " + op.op());
            }
        }
        return intervals(series, names, "seconds into the run");
    }

    private static String tpotPercentiles(RunDiff diff) {
        Histogram a = diff.a().run().histograms().get(HistogramTag.TPOT);
        Histogram b = diff.b().run().histograms().get(HistogramTag.TPOT);
        List<double[][]> series = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Object[] side : new Object[][] {{"B TPOT", b}, {"A TPOT", a}}) {
            Histogram histogram = (Histogram) side[1];
            if (histogram == null || histogram.getTotalCount() == 0) {
                continue;
            }
            LatencyDistribution distribution = LatencyDistribution.ofNanos(histogram);
            List<double[]> points = new ArrayList<>();
            for (int i = 0; i < distribution.size(); i++) {
                double p = distribution.percentile(i);
                if (p < 100) {
                    points.add(new double[] {Math.log10(1 / (1 - p / 100)), distribution.valueMs(i)});
                }
            }
            series.add(points.toArray(double[][]::new));
            names.add((String) side[0]);
        }
        if (series.isEmpty()) {
            return null;
        }
        return HtmlReportWriter.linePlot(series, names, "percentile (log10 of 1/(1-p): 1 = p90, 2 = p99)", "ms", true,
                false);
    }
}
