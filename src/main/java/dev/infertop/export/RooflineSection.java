package dev.infertop.export;

import dev.infertop.model.DecodeSteps;
import dev.infertop.model.Figures;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

import static dev.infertop.export.HtmlReportWriter.escape;

/**
 * report.html's roofline over the run: a log-log plot of each costed op's arithmetic intensity (x, FLOP/byte)
 * against what it achieved (y, GFLOP/s), under the machine's roof: the memory ceiling as the sloped line
 * (GFLOP/s = GB/s x FLOP/byte) up to the ridge point, the compute ceiling flat after it. The numbers behind
 * every point follow in a table, with the decode bound beside the decode rate measured. Without cached
 * ceilings the points stand alone and the page says how to measure them.
 */
final class RooflineSection {
    static final int HEIGHT = 300;
    static final int MARGIN_LEFT = 60;
    static final int MARGIN_RIGHT = 20;
    static final int MARGIN_TOP = 10;
    static final int MARGIN_BOTTOM = 34;
    static final int PLOT_WIDTH = HtmlReportWriter.WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    static final int PLOT_HEIGHT = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
    static final String ROOF_COLOR = "#333333";

    private RooflineSection() {}

    /**
     * Where values land: whole decades on both axes, low to high, so a point's place is its logarithm's share
     * of the decades shown.
     */
    record Scale(int xLowDecade, int xHighDecade, int yLowDecade, int yHighDecade) {
        double x(double flopsPerByte) {
            return MARGIN_LEFT + PLOT_WIDTH * (Math.log10(flopsPerByte) - xLowDecade) / (xHighDecade - xLowDecade);
        }

        double y(double gflopsPerSecond) {
            return MARGIN_TOP + PLOT_HEIGHT
                    - PLOT_HEIGHT * (Math.log10(gflopsPerSecond) - yLowDecade) / (yHighDecade - yLowDecade);
        }

        /** The decades that hold every value in {@code xs} and {@code ys} (each at least one decade wide). */
        static Scale covering(List<Double> xs, List<Double> ys) {
            int[] x = decades(xs);
            int[] y = decades(ys);
            return new Scale(x[0], x[1], y[0], y[1]);
        }

        private static int[] decades(List<Double> values) {
            double min = values.stream().mapToDouble(Double::doubleValue).min().orElse(1);
            double max = values.stream().mapToDouble(Double::doubleValue).max().orElse(1);
            int low = (int) Math.floor(Math.log10(min));
            int high = (int) Math.ceil(Math.log10(max));
            return new int[] {low, Math.max(high, low + 1)};
        }
    }

    /** The run's roofline: the plot and the table; null when no node was costed in the run. */
    static String roofline(SnapshotContent content) {
        Figures total = content.last().total();
        RooflineTotals roofline = total.roofline();
        if (roofline.isEmpty()) {
            return null;
        }
        Roofline.Ceilings ceilings = roofline.ceilings();
        List<RooflineTotals.OpRoofline> ops = roofline.ops().stream()
                .sorted(Comparator.comparingLong(RooflineTotals.OpRoofline::wallNs).reversed()).toList();
        StringBuilder html = new StringBuilder();
        String svg = plot(ops, ceilings);
        if (svg != null) {
            html.append(svg);
        }
        if (ceilings == null) {
            html.append("<p class=\"absent\">no ceilings were cached for this machine: run <code>infertop machine "
                    + "--measure</code> for the roof and a verdict per op</p>\n");
        }
        html.append(summary(roofline, total.tokens().decodeTokensPerSecond()));
        html.append(decodeSteps(roofline));
        html.append(table(ops, ceilings));
        return html.toString();
    }

    /**
     * Decode steps of every batch size the run had (a server's busy slots), as the live view's roofline panel and
     * the JSON's {@code decode_steps} give them: per step and per generated token, the decode bound at that batch
     * beside the rate measured, and where intensity reaches the ridge. Empty when no step was read.
     */
    static String decodeSteps(RooflineTotals roofline) {
        if (roofline.decodeSteps().isEmpty()) {
            return "";
        }
        Roofline.Ceilings ceilings = roofline.ceilings();
        StringBuilder html = new StringBuilder("<table class=\"decode-steps\"><tr><th>tokens a step</th><th>steps</th>"
                + "<th>weights MB a step</th><th>KV MB a step</th><th>context positions a step</th>"
                + "<th>MB a token</th><th>FLOP/byte</th><th>measured tok/s</th><th>bound tok/s</th>"
                + "<th>verdict</th></tr>\n");
        for (DecodeSteps step : roofline.decodeSteps().stream()
                .sorted(Comparator.comparingInt(DecodeSteps::batchTokens)).toList()) {
            String bound = "-";
            String verdict = "-";
            if (ceilings != null) {
                bound = String.format(Locale.ROOT, "%.1f", step.boundTokensPerSecond(ceilings));
                verdict = escape(Roofline.point(step.weightBytes() + step.kvBytes(), step.flops(), step.wallNs(),
                        ceilings).bound().text());
            }
            html.append(String.format(Locale.ROOT, "<tr><td>%d</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.1f</td>"
                            + "<td>%.3f</td><td>%.3f</td><td>%.1f</td><td>%s</td><td style=\"text-align:left\">%s</td>"
                            + "</tr>\n", step.batchTokens(), step.steps(), step.weightBytesPerStep() / 1e6,
                    step.kvBytesPerStep() / 1e6, (double) step.contextPositions() / step.steps(),
                    step.bytesPerToken() / 1e6, step.flopsPerByte(), step.measuredTokensPerSecond(), bound, verdict));
        }
        html.append("</table>\n");
        StringBuilder notes = new StringBuilder();
        double ridgeBatch = roofline.ridgeBatchTokens();
        if (ceilings != null && !Double.isNaN(ridgeBatch)) {
            notes.append(Double.isFinite(ridgeBatch)
                    ? String.format(Locale.ROOT, "a step's intensity reaches the ridge (%.2f FLOP/byte) at about %.1f "
                    + "busy sequences", ceilings.ridgeFlopsPerByte(), ridgeBatch)
                    : "KV reads keep a step's intensity below the ridge at any number of busy sequences");
        }
        long overtakes = roofline.kvOvertakesWeightsAtPositions();
        if (overtakes > 0) {
            notes.append(notes.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT,
                    "attention's KV reads pass the weights past %d context positions a step", overtakes));
        }
        if (!notes.isEmpty()) {
            html.append("<p class=\"decode-steps-notes\">").append(notes).append("</p>\n");
        }
        return html.toString();
    }

    /** The plot, or null when no op has both bytes and FLOPs to place on log axes. */
    static String plot(List<RooflineTotals.OpRoofline> ops, Roofline.Ceilings ceilings) {
        List<RooflineTotals.OpRoofline> placed = new ArrayList<>();
        List<Double> xs = new ArrayList<>();
        List<Double> ys = new ArrayList<>();
        for (RooflineTotals.OpRoofline op : ops) {
            Roofline.Point point = point(op, ceilings);
            if (op.bytes() > 0 && op.flops() > 0 && op.wallNs() > 0) {
                placed.add(op);
                xs.add(point.flopsPerByte());
                ys.add(point.flopsPerSecond() / 1e9);
            }
        }
        if (placed.isEmpty()) {
            return null;
        }
        if (ceilings != null) {
            xs.add(ceilings.ridgeFlopsPerByte());
            ys.add(ceilings.flopsPerSecond() / 1e9);
        }
        Scale scale = Scale.covering(xs, ys);
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"plot roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "viewBox=\"0 0 %d %d\"><g class=\"plot-area\">\n",
                HtmlReportWriter.WIDTH, HEIGHT, HtmlReportWriter.WIDTH, HEIGHT));
        axes(svg, scale);
        if (ceilings != null) {
            roof(svg, scale, ceilings);
        }
        for (RooflineTotals.OpRoofline op : placed) {
            Roofline.Point point = point(op, ceilings);
            double x = scale.x(point.flopsPerByte());
            double y = scale.y(point.flopsPerSecond() / 1e9);
            svg.append(String.format(Locale.ROOT, "<circle class=\"op\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">"
                            + "<title>%s: %.3g FLOP/byte, %.3g GFLOP/s, %.3g GB/s</title></circle>", x, y,
                    color(ceilings == null ? null : point.bound()), escape(op.op()), point.flopsPerByte(),
                    point.flopsPerSecond() / 1e9, point.bytesPerSecond() / 1e9));
            svg.append(String.format(Locale.ROOT, "<text class=\"op-label\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                    x + 7, y - 6, escape(label(op.op()))));
        }
        return svg.append("</g></svg>\n").toString();
    }

    /**
     * The memory ceiling from where it enters the plot to the ridge point, the compute ceiling from there to the
     * right edge, and the ridge point marked on the x axis.
     */
    private static void roof(StringBuilder svg, Scale scale, Roofline.Ceilings ceilings) {
        double memoryGbPerSecond = ceilings.memoryBytesPerSecond() / 1e9;
        double computeGflopsPerSecond = ceilings.flopsPerSecond() / 1e9;
        double ridge = ceilings.ridgeFlopsPerByte();
        // Below the plot's left edge the sloped line leaves through its bottom: start where it enters.
        double start = Math.max(Math.pow(10, scale.xLowDecade()), Math.pow(10, scale.yLowDecade()) / memoryGbPerSecond);
        double end = Math.pow(10, scale.xHighDecade());
        svg.append(String.format(Locale.ROOT, "<line class=\"memory-ceiling\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        + "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", scale.x(start),
                scale.y(memoryGbPerSecond * start), scale.x(ridge), scale.y(computeGflopsPerSecond), ROOF_COLOR));
        svg.append(String.format(Locale.ROOT, "<line class=\"compute-ceiling\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        + "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", scale.x(ridge),
                scale.y(computeGflopsPerSecond), scale.x(end), scale.y(computeGflopsPerSecond), ROOF_COLOR));
        svg.append(String.format(Locale.ROOT, "<line class=\"ridge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%d\" "
                        + "stroke=\"#999\" stroke-dasharray=\"4 3\"/>", scale.x(ridge), scale.y(computeGflopsPerSecond),
                scale.x(ridge), MARGIN_TOP + PLOT_HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\">memory %.1f GB/s</text>",
                scale.x(start) + 4, scale.y(memoryGbPerSecond * start) - 6, memoryGbPerSecond));
        // Just past the ridge: the ops that reach the compute roof sit further right.
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\">compute %.1f GFLOP/s</text>",
                scale.x(ridge) + 4, scale.y(computeGflopsPerSecond) - 5, computeGflopsPerSecond));
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">ridge %.2f</text>\n", scale.x(ridge) + 3,
                MARGIN_TOP + PLOT_HEIGHT - 4, ridge));
    }

    private static void axes(StringBuilder svg, Scale scale) {
        svg.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                MARGIN_LEFT, MARGIN_TOP, PLOT_WIDTH, PLOT_HEIGHT));
        for (int decade = scale.xLowDecade(); decade <= scale.xHighDecade(); decade++) {
            double x = scale.x(Math.pow(10, decade));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x, MARGIN_TOP, x,
                    MARGIN_TOP + PLOT_HEIGHT, x, MARGIN_TOP + PLOT_HEIGHT + 13, decadeLabel(decade)));
        }
        for (int decade = scale.yLowDecade(); decade <= scale.yHighDecade(); decade++) {
            double y = scale.y(Math.pow(10, decade));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", MARGIN_LEFT, y,
                    MARGIN_LEFT + PLOT_WIDTH, y, MARGIN_LEFT - 4, y + 4, decadeLabel(decade)));
        }
        svg.append(String.format(Locale.ROOT,
                "<text transform=\"rotate(-90 14 %d)\" x=\"14\" y=\"%d\" text-anchor=\"middle\">GFLOP/s (log)</text>",
                MARGIN_TOP + PLOT_HEIGHT / 2, MARGIN_TOP + PLOT_HEIGHT / 2));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity, "
                + "FLOP/byte (log)</text>\n", MARGIN_LEFT + PLOT_WIDTH / 2, HEIGHT - 4));
    }

    /** 10^decade written out: 0.01, 0.1, 1, 10, 100. */
    static String decadeLabel(int decade) {
        return decade >= 0 ? "1" + "0".repeat(decade) : "0." + "0".repeat(-decade - 1) + "1";
    }

    private static String summary(RooflineTotals roofline, double measuredTokensPerSecond) {
        Roofline.Ceilings ceilings = roofline.ceilings();
        StringBuilder text = new StringBuilder("<p class=\"roofline-summary\">");
        if (ceilings != null) {
            text.append(String.format(Locale.ROOT, "memory ceiling %.1f GB/s &middot; compute ceiling %.1f GFLOP/s "
                            + "&middot; ridge %.2f FLOP/byte<br>", ceilings.memoryBytesPerSecond() / 1e9,
                    ceilings.flopsPerSecond() / 1e9, ceilings.ridgeFlopsPerByte()));
        }
        if (roofline.weightBytesPerDecodeToken() > 0) {
            text.append(String.format(Locale.ROOT, "decode: %.1f MB of weights per token", 
                    roofline.weightBytesPerDecodeToken() / 1e6));
            if (ceilings != null) {
                text.append(String.format(Locale.ROOT, ", bound %.1f tok/s by the memory ceiling",
                        Roofline.decodeBoundTokensPerSecond(roofline.weightBytesPerDecodeToken(), ceilings)));
            }
            text.append(String.format(Locale.ROOT, "; measured %.1f tok/s", measuredTokensPerSecond));
        } else if (roofline.decodeSteps().isEmpty()) {
            text.append("no one-token decode graph read: no weight bytes per token");
        } else {
            text.append("decode steps of several tokens (one per busy sequence) in the table below");
        }
        return text.append("</p>\n").toString();
    }

    private static String table(List<RooflineTotals.OpRoofline> ops, Roofline.Ceilings ceilings) {
        StringBuilder table = new StringBuilder("<table class=\"roofline\"><tr><th>op</th><th>nodes</th><th>GB/s</th>"
                + "<th>GFLOP/s</th><th>FLOP/byte</th><th>% memory</th><th>% compute</th><th>verdict</th></tr>\n");
        for (RooflineTotals.OpRoofline op : ops) {
            Roofline.Point point = point(op, ceilings);
            table.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>%d</td><td>%.2f</td><td>%.2f</td><td>%s</td>"
                            + "<td>%s</td><td>%s</td><td style=\"text-align:left\">%s</td></tr>\n", escape(op.op()),
                    op.nodes(), point.bytesPerSecond() / 1e9, point.flopsPerSecond() / 1e9,
                    Double.isInfinite(point.flopsPerByte()) ? "-"
                            : String.format(Locale.ROOT, "%.3f", point.flopsPerByte()),
                    ceilings == null ? "-" : String.format(Locale.ROOT, "%.0f", 100 * point.memoryShare()),
                    ceilings == null ? "-" : String.format(Locale.ROOT, "%.0f", 100 * point.computeShare()),
                    ceilings == null ? "-" : escape(point.bound().text())));
        }
        return table.append("</table>\n").toString();
    }

    /** The rates and intensity do not depend on the ceilings; without them the shares are not read. */
    private static Roofline.Point point(RooflineTotals.OpRoofline op, Roofline.Ceilings ceilings) {
        return op.point(ceilings == null ? new Roofline.Ceilings(1, 1) : ceilings);
    }

    private static String color(Roofline.Bound bound) {
        if (bound == null) {
            return HtmlReportWriter.COLORS[1];
        }
        return switch (bound) {
            case MEMORY -> HtmlReportWriter.COLORS[0];
            case COMPUTE -> HtmlReportWriter.COLORS[2];
            case NEITHER -> HtmlReportWriter.COLORS[3];
        };
    }

    private static String label(String op) {
        return op.length() > 20 ? op.substring(0, 19) + "…" : op;
    }
}
