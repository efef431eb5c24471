package dev.infertop.export;

import dev.infertop.history.FlightRecorder;
import dev.infertop.model.Other;
import dev.infertop.model.HistogramTag;
import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.OpTotals;
import dev.infertop.model.SafeText;
import dev.infertop.model.Snapshot;
import dev.infertop.model.ThreadTotals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * report.html: one self-contained page (inline CSS and SVG, no script, no network) with a section per plot.
 * Sections are a list: a layer that comes later (MoE experts, counters) adds a {@link Section}; a section
 * without data in this run says "not recorded in this run" instead of drawing an empty plot.
 */
public final class HtmlReportWriter {
    static final int WIDTH = 560;
    static final int HEIGHT = 240;
    static final int MARGIN_LEFT = 60;
    static final int MARGIN_BOTTOM = 30;
    static final int MARGIN_TOP = 10;
    static final int MARGIN_RIGHT = 150;
    /** Line colours, saturated so a screenshot tells data pixels from text and axes. */
    public static final String[] COLORS = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf"};
    static final int MAX_SERIES = COLORS.length;

    /** One plot of the report: its title, and its SVG, or null when the run holds no data for it. */
    public interface Section {
        String title();

        /** Why the plot is absent when {@link #svg} gives null. */
        default String absentReason() {
            return "not recorded in this run";
        }

        String svg(SnapshotContent content);
    }

    /** The report's sections, in page order. */
    public static List<Section> sections() {
        List<Section> sections = new ArrayList<>();
        sections.add(section("Op time per token across the run", HtmlReportWriter::opTimePerToken));
        sections.add(section("Token latency percentiles (TTFT per prefill call, TPOT per decode step)",
                HtmlReportWriter::tokenPercentiles));
        sections.add(section("Latency percentiles per op type (wall time per op group)", HtmlReportWriter::percentiles));
        sections.add(section("Thread balance: work and barrier wait per thread", HtmlReportWriter::threadBalance));
        sections.add(section("Time vs FLOPs per op type (estimated FLOPs, last seconds)", HtmlReportWriter::timeVsFlops));
        sections.add(section("Roofline per op type: GFLOP/s vs FLOP/byte under this machine's ceilings (run)",
                RooflineSection::roofline));
        sections.add(section("Thread states: running, runnable (waiting for a CPU), sleeping",
                DeepLayerSections::threadStates));
        sections.add(section("Counters per op type: IPC, L3 refills per 1k instructions, verdict",
                DeepLayerSections::counters));
        sections.add(section("Expert activations (heatmap)", MoeSections::experts));
        return sections;
    }

    private static Section section(String title, java.util.function.Function<SnapshotContent, String> svg) {
        return new Section() {
            public String title() {
                return title;
            }

            public String svg(SnapshotContent content) {
                return svg.apply(content);
            }
        };
    }

    public static String html(SnapshotContent content) {
        return html(content, sections());
    }

    /** The page's head up to its body, with the report's style: shared with infertop diff's side-by-side report. */
    public static String head(String title) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + escape(title)
                + "</title>\n" + STYLE;
    }

    private static final String STYLE = new StringBuilder()
            .append("<style>body{font:14px sans-serif;margin:16px;background:#fff;color:#222}")
            .append("section{display:inline-block;vertical-align:top;margin:0 16px 16px 0;width:").append(WIDTH)
            .append("px}")
            .append("h2{font-size:15px;margin:4px 0}.absent{width:").append(WIDTH).append("px;height:40px;")
            .append("color:#777;font-style:italic}svg text{font:11px sans-serif;fill:#333}"
                    + "table{border-collapse:collapse;font-size:12px}td,th{padding:1px 6px;text-align:right}"
                    + "td:first-child,th:first-child{text-align:left}</style>\n</head><body>\n").toString();

    public static String html(SnapshotContent content, List<Section> sections) {
        Snapshot s = content.last();
        StringBuilder page = new StringBuilder();
        page.append(head("infertop report: " + s.target().command() + " (pid " + s.target().pid() + ")"))
                .append("<h1 style=\"font-size:18px\">infertop report: ").append(escape(s.target().command()))
                .append(" pid ").append(s.target().pid()).append("</h1>\n<p>")
                .append(escape(s.target().modelFile() == null ? "model not seen" : s.target().modelFile()))
                .append(String.format(Locale.ROOT, " &middot; run %.1f s &middot; %d prefill + %d decode tokens",
                        s.total().spanNs() / 1e9, s.total().tokens().tokensPrefill(), s.total().tokens().tokensDecode()))
                .append(String.format(Locale.ROOT, " &middot; decode %.1f tok/s &middot; lost events %d</p>\n",
                        s.total().tokens().decodeTokensPerSecond(), s.lostEvents()));
        for (Section section : sections) {
            String svg = section.svg(content);
            page.append("<section><h2>").append(escape(section.title())).append("</h2>\n");
            if (svg == null) {
                page.append("<p class=\"absent\">").append(escape(section.absentReason())).append("</p>");
            } else {
                page.append(svg);
            }
            page.append("</section>\n");
        }
        page.append("</body></html>\n");
        return page.toString();
    }

    /** Wall ms per token of each of the top op types, tick by tick: attention grows with context, matmuls stay flat. */
    static String opTimePerToken(SnapshotContent content) {
        List<String> top = topOps(content.last(), MAX_SERIES);
        List<SnapshotContent.TickSample> ticks = content.ticks().stream().filter(t -> t.tokens() > 0).toList();
        if (top.isEmpty() || ticks.isEmpty()) {
            return null;
        }
        List<double[][]> series = new ArrayList<>();
        for (String op : top) {
            double[][] points = new double[ticks.size()][];
            for (int i = 0; i < ticks.size(); i++) {
                SnapshotContent.TickSample tick = ticks.get(i);
                points[i] = new double[] {tick.runSeconds(), tick.opWallNs().getOrDefault(op, 0L) / 1e6 / tick.tokens()};
            }
            series.add(points);
        }
        return linePlot(series, top, "run time (s)", "ms per token", true, false);
    }

    /** Each top op type's wall time per group at the plot percentiles (x: percentile, as 1/(1-p) on a log axis). */
    static String percentiles(SnapshotContent content) {
        List<String> names = new ArrayList<>();
        List<double[][]> series = new ArrayList<>();
        for (String op : topOps(content.last(), MAX_SERIES)) {
            OpTotals totals = content.last().total().operators().ops().stream().filter(o -> o.op().equals(op))
                    .findFirst().orElseThrow();
            LatencyDistribution distribution = totals.distribution();
            if (distribution.size() == 0) {
                continue;
            }
            List<double[]> points = new ArrayList<>();
            for (int i = 0; i < distribution.size(); i++) {
                double p = distribution.percentile(i);
                if (p >= 100) {
                    continue;
                }
                points.add(new double[] {Math.log10(1 / (1 - p / 100)), distribution.valueMs(i)});
            }
            names.add(op);
            series.add(points.toArray(double[][]::new));
        }
        if (series.isEmpty()) {
            return null;
        }
        return linePlot(series, names, "percentile (log10 of 1/(1-p): 1 = p90, 2 = p99)", "ms", true, false);
    }

    /** TTFT and TPOT at the plot percentiles, from the run's histograms (the hlog's intervals added up). */
    static String tokenPercentiles(SnapshotContent content) {
        List<String> names = new ArrayList<>();
        List<double[][]> series = new ArrayList<>();
        for (String tag : List.of(HistogramTag.TTFT, HistogramTag.TPOT)) {
            var intervals = content.histograms().getOrDefault(tag, List.of());
            if (intervals.isEmpty()) {
                continue;
            }
            org.HdrHistogram.Histogram total = intervals.getFirst().decode();
            intervals.subList(1, intervals.size()).forEach(interval -> total.add(interval.decode()));
            LatencyDistribution distribution = LatencyDistribution.ofNanos(total);
            List<double[]> points = new ArrayList<>();
            for (int i = 0; i < distribution.size(); i++) {
                double p = distribution.percentile(i);
                if (p < 100) {
                    points.add(new double[] {Math.log10(1 / (1 - p / 100)), distribution.valueMs(i)});
                }
            }
            names.add(tag.toUpperCase(Locale.ROOT) + " (n=" + total.getTotalCount() + ")");
            series.add(points.toArray(double[][]::new));
        }
        if (series.isEmpty()) {
            return null;
        }
        return linePlot(series, names, "percentile (log10 of 1/(1-p): 1 = p90, 2 = p99)", "ms", true, false);
    }

    /**
     * Each top op type's mean work time per thread against its groups' estimated FLOPs (log-log), from the
     * flight recorder's op slices: one dot per distinct FLOPs value (shape). FLOPs as OperatorAggregator
     * estimates them: MUL_MAT 2·K·(output elements), other ops their output elements, MUL_MAT_ID unknown.
     */
    static String timeVsFlops(SnapshotContent content) {
        java.util.Map<String, java.util.TreeMap<Long, double[]>> byOp = new java.util.LinkedHashMap<>();
        java.util.Map<String, Double> totalMsByOp = new java.util.HashMap<>();
        for (FlightRecorder.Slice slice : content.window().slices()) {
            if (slice.kind() != FlightRecorder.Kind.OP || slice.value() <= 0) {
                continue;
            }
            String op = content.window().label(slice.label());
            double ms = slice.durationNs() / 1e6;
            double[] sumAndCount = byOp.computeIfAbsent(op, o -> new java.util.TreeMap<>())
                    .computeIfAbsent(slice.value(), f -> new double[2]);
            sumAndCount[0] += ms;
            sumAndCount[1]++;
            totalMsByOp.merge(op, ms, Double::sum);
        }
        List<String> top = totalMsByOp.entrySet().stream()
                .sorted(java.util.Map.Entry.<String, Double>comparingByValue().reversed()).limit(MAX_SERIES)
                .map(java.util.Map.Entry::getKey).toList();
        if (top.isEmpty()) {
            return null;
        }
        List<double[][]> series = new ArrayList<>();
        for (String op : top) {
            List<double[]> points = new ArrayList<>();
            byOp.get(op).forEach((flops, sumAndCount) ->
                    points.add(new double[] {Math.log10(flops), sumAndCount[0] / sumAndCount[1]}));
            series.add(points.toArray(double[][]::new));
        }
        return linePlot(series, top, "log10 FLOPs per group (estimated)", "ms per thread", true, true);
    }

    /** Stacked bars per thread: work and barrier wait over the run. */
    static String threadBalance(SnapshotContent content) {
        List<ThreadTotals> threads = content.last().total().operators().threads();
        if (threads.isEmpty()) {
            return null;
        }
        double max = threads.stream().mapToDouble(t -> (t.workNs() + t.barrierWaitNs()) / 1e6).max().orElse(1);
        max = Math.max(max, 1e-9);
        int plotW = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
        int plotH = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
        StringBuilder svg = open();
        axes(svg, "thread", "ms", 0, max);
        double slot = (double) plotW / threads.size();
        double barW = Math.max(2, slot * 0.6);
        for (int i = 0; i < threads.size(); i++) {
            ThreadTotals t = threads.get(i);
            double x = MARGIN_LEFT + i * slot + (slot - barW) / 2;
            double workH = plotH * (t.workNs() / 1e6) / max;
            double waitH = plotH * (t.barrierWaitNs() / 1e6) / max;
            double base = MARGIN_TOP + plotH;
            svg.append(rect(x, base - workH, barW, workH, COLORS[1]));
            svg.append(rect(x, base - workH - waitH, barW, waitH, COLORS[3]));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                    x + barW / 2, HEIGHT - MARGIN_BOTTOM + 14, Other.tid(t.tid())));
        }
        legend(svg, List.of("work", "barrier wait"), List.of(COLORS[1], COLORS[3]));
        return svg.append("</g></svg>\n").toString();
    }

    /** The op types with the most wall time over the run. */
    static List<String> topOps(Snapshot s, int n) {
        return s.total().operators().ops().stream().sorted(Comparator.comparingLong(OpTotals::wallNs).reversed())
                .limit(n).map(OpTotals::op).toList();
    }

    /** Smallest value a log axis shows: 1 ns in ms. */
    static final double LOG_FLOOR = 1e-6;

    /**
     * Lines through (x, y) points, one per series. With {@code logY} the y axis is logarithmic (latencies
     * span orders of magnitude: a linear axis flattens every op but the slowest onto the bottom).
     */
    public static String linePlot(List<double[][]> series, List<String> names, String xLabel, String yLabel,
                           boolean logY, boolean dotsOnly) {
        if (logY) {
            List<double[][]> logged = new ArrayList<>();
            for (double[][] points : series) {
                double[][] copy = new double[points.length][];
                for (int i = 0; i < points.length; i++) {
                    copy[i] = new double[] {points[i][0], Math.log10(Math.max(points[i][1], LOG_FLOOR))};
                }
                logged.add(copy);
            }
            series = logged;
        }
        double minX = Double.MAX_VALUE, maxX = -Double.MAX_VALUE, maxY = logY ? -Double.MAX_VALUE : 0;
        double minY = logY ? Double.MAX_VALUE : 0;
        for (double[][] points : series) {
            for (double[] p : points) {
                minX = Math.min(minX, p[0]);
                maxX = Math.max(maxX, p[0]);
                maxY = Math.max(maxY, p[1]);
                minY = Math.min(minY, p[1]);
            }
        }
        if (maxX <= minX) {
            maxX = minX + 1;
        }
        if (logY) {
            minY = Math.floor(minY);
            maxY = Math.max(Math.ceil(maxY), minY + 1);
        } else if (maxY <= 0) {
            maxY = 1;
        }
        int plotW = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
        int plotH = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
        StringBuilder svg = open();
        axes(svg, String.format(Locale.ROOT, "%s: %.3g .. %.3g", xLabel, minX, maxX),
                logY ? yLabel + " (log)" : yLabel, logY ? Math.pow(10, minY) : minY, logY ? Math.pow(10, maxY) : maxY);
        List<String> colors = new ArrayList<>();
        for (int s = 0; s < series.size(); s++) {
            String color = COLORS[s % COLORS.length];
            colors.add(color);
            StringBuilder points = new StringBuilder();
            for (double[] p : series.get(s)) {
                double x = MARGIN_LEFT + plotW * (p[0] - minX) / (maxX - minX);
                double y = MARGIN_TOP + plotH - plotH * (p[1] - minY) / (maxY - minY);
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            if (!dotsOnly) {
                svg.append("<polyline fill=\"none\" stroke-width=\"2.5\" stroke=\"").append(color)
                        .append("\" points=\"").append(points.toString().strip()).append("\"/>\n");
            }
            if (dotsOnly || series.get(s).length == 1) { // one point: a dot, not an invisible line
                for (double[] p : series.get(s)) {
                    svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>",
                            MARGIN_LEFT + plotW * (p[0] - minX) / (maxX - minX),
                            MARGIN_TOP + plotH - plotH * (p[1] - minY) / (maxY - minY), color));
                }
            }
        }
        legend(svg, names, colors);
        return svg.append("</g></svg>\n").toString();
    }

    private static StringBuilder open() {
        return new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "viewBox=\"0 0 %d %d\"><g class=\"plot-area\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
    }

    private static void axes(StringBuilder svg, String xLabel, String yLabel, double minY, double maxY) {
        int plotW = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
        int plotH = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
        svg.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                MARGIN_LEFT, MARGIN_TOP, plotW, plotH));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g</text>",
                MARGIN_LEFT - 4, MARGIN_TOP + 10, maxY));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g</text>",
                MARGIN_LEFT - 4, MARGIN_TOP + plotH, minY));
        svg.append(String.format(Locale.ROOT,
                "<text transform=\"rotate(-90 14 %d)\" x=\"14\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                MARGIN_TOP + plotH / 2, MARGIN_TOP + plotH / 2, escape(yLabel)));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", MARGIN_LEFT,
                HEIGHT - 4, escape(xLabel)));
    }

    private static void legend(StringBuilder svg, List<String> names, List<String> colors) {
        int x = WIDTH - MARGIN_RIGHT + 8;
        for (int i = 0; i < names.size(); i++) {
            int y = MARGIN_TOP + 12 + i * 16;
            svg.append(rect(x, y - 8, 10, 10, colors.get(i)));
            String name = names.get(i);
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>", x + 14, y + 1,
                    escape(name.length() > 20 ? name.substring(0, 19) + "…" : name)));
        }
        svg.append('\n');
    }

    private static String rect(double x, double y, double w, double h, String color) {
        return String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
                x, y, w, h, color);
    }

    /** Text for an HTML text node or attribute: controls made visible ({@link SafeText}), then markup escaped. */
    public static String escape(String raw) {
        String text = SafeText.of(raw);
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
