package dev.infertop.export;

import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeMath;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.Snapshot;

import java.util.Locale;

import static dev.infertop.export.HtmlReportWriter.escape;

/**
 * report.html's MoE section: the expert heatmap over the run (layer × expert, decode and prefill apart), each
 * cell shaded by selection frequency (tokens routed to the expert / tokens the layer computed in that phase) on
 * one scale for both maps, with a legend; readable without colour: every cell's {@code <title>} gives its count
 * and frequency, and cells wide enough print the frequency in percent. Under it, the imbalance per layer (CV,
 * the summary's over the sliding window and over the run, hottest and coldest expert) and per-expert time.
 * "not recorded in this run" when the moe layer was off; its reason when it could not read ids.
 */
final class MoeSections {
    static final int LABEL_WIDTH = 40;
    static final int MAX_CELL = 24;
    static final int MIN_CELL_HEIGHT = 6;
    /** Cells at least this big print their frequency. */
    static final int TEXT_CELL_WIDTH = 20;
    static final int TEXT_CELL_HEIGHT = 12;
    static final int LEGEND_STEPS = 5;
    /** White to dark blue; the light end keeps dark text readable, the dark end takes white text. */
    static final String NO_IDS = "the moe layer was on but read no expert ids (a model without MUL_MAT_ID nodes?)";
    private static final int[] LIGHT = {0xff, 0xff, 0xff};
    private static final int[] DARK = {0x08, 0x30, 0x6b};

    private MoeSections() {}

    static String experts(SnapshotContent content) {
        Snapshot s = content.last();
        LayerStatus status = DeepLayerSections.status(s, Layer.MOE);
        MoeTotals moe = s.moe();
        if (!moe.active() || moe.layerCount() == 0 || moe.expertCount() == 0) {
            if (status != null && status.state() == LayerStatus.State.UNAVAILABLE && !status.reason().isEmpty()) {
                return "<p class=\"absent\">" + escape(status.reason()) + "</p>";
            }
            if (moe.active()) {
                return "<p class=\"absent\">" + NO_IDS + "</p>";
            }
            return null;
        }
        double max = 0;
        for (int l = 0; l < moe.layerCount(); l++) {
            for (int e = 0; e < moe.expertCount(); e++) {
                max = Math.max(max, MoeTotals.frequency(moe.totalDecode(), moe.totalRowsDecode(), l, e));
                max = Math.max(max, MoeTotals.frequency(moe.totalPrefill(), moe.totalRowsPrefill(), l, e));
            }
        }
        StringBuilder html = new StringBuilder();
        html.append(heatmap(moe, "decode", moe.totalDecode(), moe.totalRowsDecode(), max));
        html.append(heatmap(moe, "prefill", moe.totalPrefill(), moe.totalRowsPrefill(), max));
        html.append(legend(max));
        html.append(imbalance(moe));
        html.append(expertTimes(moe));
        return html.toString();
    }

    static int cellWidth(int experts) {
        return Math.max(1, Math.min(MAX_CELL, (HtmlReportWriter.WIDTH - LABEL_WIDTH - 10) / experts));
    }

    static int cellHeight(int layers) {
        return Math.max(MIN_CELL_HEIGHT, Math.min(MAX_CELL, 240 / layers));
    }

    /** One phase's map: a row per layer, a column per expert; the top row names the experts. */
    static String heatmap(MoeTotals moe, String phase, long[][] counts, long[] rows, double max) {
        int layers = moe.layerCount();
        int experts = moe.expertCount();
        int w = cellWidth(experts);
        int h = cellHeight(layers);
        int top = 30;
        int width = HtmlReportWriter.WIDTH; // full width: the maps stack, and the phase line is not cut
        int height = top + layers * h + 6;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"plot heatmap\" data-phase=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                        + "height=\"%d\" viewBox=\"0 0 %d %d\"><g class=\"plot-area\">\n", phase, width, height, width,
                height));
        long tokens = 0;
        for (long r : rows) {
            tokens += r;
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"0\" y=\"12\">%s: %d tokens (layer rows), "
                + "frequency = tokens to the expert / tokens of the layer</text>\n", phase, tokens));
        for (int e = 0; e < experts; e++) {
            if (w >= TEXT_CELL_WIDTH || e % Math.max(1, (int) Math.ceil(TEXT_CELL_WIDTH / (double) w)) == 0) {
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>",
                        LABEL_WIDTH + e * w + w / 2, top - 4, e));
            }
        }
        svg.append('\n');
        for (int l = 0; l < layers; l++) {
            int y = top + l * h;
            if (h >= 10 || l % Math.max(1, (int) Math.ceil(10.0 / h)) == 0) {
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">L%d</text>",
                        LABEL_WIDTH - 4, y + Math.min(h, 12) - 2, l));
            }
            for (int e = 0; e < experts; e++) {
                long count = l < counts.length && e < counts[l].length ? counts[l][e] : 0;
                double f = MoeTotals.frequency(counts, rows, l, e);
                int x = LABEL_WIDTH + e * w;
                svg.append(String.format(Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
                                + "stroke-width=\"0.5\"><title>layer %d expert %d %s: %d of %d tokens (%.1f%%)</title>"
                                + "</rect>", x, y, w, h, shade(max <= 0 ? 0 : f / max), l, e, phase, count,
                        l < rows.length ? rows[l] : 0, 100 * f));
                if (w >= TEXT_CELL_WIDTH && h >= TEXT_CELL_HEIGHT && count > 0) {
                    svg.append(String.format(Locale.ROOT,
                            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:%s;font-size:9px\">%d</text>",
                            x + w / 2, y + h / 2 + 3, max > 0 && f / max > 0.5 ? "#fff" : "#000",
                            Math.round(100 * f)));
                }
            }
            svg.append('\n');
        }
        svg.append("</g></svg>\n");
        return svg.toString();
    }

    /** The shade for a frequency as a fraction of the maps' highest. */
    static String shade(double fraction) {
        double t = Math.max(0, Math.min(1, fraction));
        return String.format(Locale.ROOT, "#%02x%02x%02x", mix(0, t), mix(1, t), mix(2, t));
    }

    private static int mix(int channel, double t) {
        return (int) Math.round(LIGHT[channel] + (DARK[channel] - LIGHT[channel]) * t);
    }

    static String legend(double max) {
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"legend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"22\" "
                        + "viewBox=\"0 0 %d 22\"><text x=\"0\" y=\"15\">frequency</text>", HtmlReportWriter.WIDTH,
                HtmlReportWriter.WIDTH));
        for (int k = 0; k < LEGEND_STEPS; k++) {
            double fraction = k / (double) (LEGEND_STEPS - 1);
            int x = 70 + k * 90;
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"4\" width=\"14\" height=\"14\" fill=\"%s\" "
                    + "stroke=\"#999\"/><text x=\"%d\" y=\"15\">%.1f%%</text>", x, shade(fraction), x + 18,
                    100 * max * fraction));
        }
        return svg.append("</svg>\n").toString();
    }

    /** Per layer: CV over the window (the summary's), CV over the run, hottest and coldest expert over the run. */
    static String imbalance(MoeTotals moe) {
        StringBuilder table = new StringBuilder("<table class=\"moe-imbalance\"><caption>Imbalance per layer "
                + "(CV: standard deviation / mean of the experts' token counts)</caption><tr><th>layer</th>"
                + "<th>CV window</th><th>CV run</th><th>hottest</th><th>coldest</th></tr>");
        for (int l = 0; l < moe.layerCount(); l++) {
            long[] counts = moe.runCounts(l);
            int hottest = 0;
            int coldest = 0;
            for (int e = 1; e < counts.length; e++) {
                hottest = counts[e] > counts[hottest] ? e : hottest;
                coldest = counts[e] < counts[coldest] ? e : coldest;
            }
            table.append(String.format(Locale.ROOT,
                    "<tr><td>%d</td><td>%s</td><td>%s</td><td>%d (%d)</td><td>%d (%d)</td></tr>", l,
                    figure(l < moe.cvByLayer().length ? moe.cvByLayer()[l] : Double.NaN),
                    figure(MoeMath.coefficientOfVariation(counts)), hottest, counts[hottest], coldest,
                    counts[coldest]));
        }
        return table.append("</table>\n").toString();
    }

    /** Per expert: MoE nodes it ran in, their median and p99 time, and its row-weighted share of their time. */
    static String expertTimes(MoeTotals moe) {
        StringBuilder table = new StringBuilder("<table class=\"moe-experts\"><caption>Time per expert (MoE node "
                + "time, all layers)</caption><tr><th>expert</th><th>nodes</th><th>p50 ms</th><th>p99 ms</th>"
                + "<th>share ms</th></tr>");
        for (MoeTotals.ExpertStats e : moe.experts()) {
            table.append(String.format(Locale.ROOT, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>",
                    e.expert(), e.activeNodes(), figure(e.nodeP50Ms()), figure(e.nodeP99Ms()), figure(e.rowShareMs())));
        }
        return table.append("</table>\n").toString();
    }

    private static String figure(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.4f", value);
    }
}
