package dev.infertop.view;

import dev.infertop.model.DecodeSteps;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.CounterFigures;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.OpCounters;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.model.Snapshot;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The roofline per op (key R, in place of the operator table), in text: the machine's two ceilings and their
 * ridge point, what one decode token streams and the decode rate that allows beside the rate measured in the
 * same span, then per op its achieved GB/s and GFLOP/s, intensity, the share of each ceiling and the verdict.
 * Without cached ceilings it says how to measure them instead of a verdict. Where the counters layer counted
 * the same op (a PMU), its verdict stands beside as a second opinion: the roofline's comes from bytes and FLOPs
 * the graph must move, the PMU's from what the caches did.
 */
public final class RooflinePanel implements Panel {
    /** What to run when no ceilings are cached. */
    public static final String MEASURE_HINT = "no ceilings cached for this machine: run `infertop machine --measure`,"
            + " then start infertop again, for the share of each ceiling and a verdict";
    /**
     * Faster than the memory ceiling allows: the weights did not all come from memory (a model that fits the
     * last-level cache), or the ceiling was measured while the machine was busy.
     */
    static final String ABOVE_BOUND = ": above it, weights from cache or the ceiling measured low";
    /** Stands in for unmeasured ceilings where only a point's rates and intensity are read. */
    private static final Roofline.Ceilings UNKNOWN_CEILINGS = new Roofline.Ceilings(1, 1);
    static final String OP_FORMAT = "%-16s %7s %7s %5s %8s %5s %7s";

    private final Theme theme;

    public RooflinePanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        Figures f = s.shown();
        RooflineTotals roofline = f.roofline();
        Roofline.Ceilings ceilings = roofline.ceilings();
        int row = 0;
        theme.apply(g, Theme.Role.HEADING);
        // Laid out for 80 columns: what matters first on every line, the rest may be cut.
        Cells.put(g, 0, row++, " ROOFLINE" + (ceilings == null ? ""
                : String.format(Locale.ROOT, "  memory %.1f GB/s  compute %.1f GFLOP/s  ridge %.2f FLOP/B",
                ceilings.memoryBytesPerSecond() / 1e9, ceilings.flopsPerSecond() / 1e9, ceilings.ridgeFlopsPerByte()))
                + (s.isFinal() ? "  run" : s.budget().heldWindowText().isEmpty() ? "  interval"
                : "  " + s.budget().heldWindowText()), width);
        if (ceilings == null) {
            theme.apply(g, Theme.Role.WARN);
            Cells.put(g, 0, row++, " " + MEASURE_HINT, width);
        }
        theme.apply(g, Theme.Role.NORMAL);
        // Decode steps over the run: the budget's windows each catch a few, and the curve by busy slots wants
        // every batch size seen so far.
        RooflineTotals runRoofline = s.total().roofline();
        if (runRoofline.decodeSteps().isEmpty()) {
            Cells.put(g, 0, row++, " " + decodeLine(roofline, f.tokens().decodeTokensPerSecond()), width);
        } else {
            for (String line : decodeStepLines(runRoofline)) {
                if (row < rows) {
                    Cells.put(g, 0, row++, " " + line, width);
                }
            }
        }
        if (ceilings != null) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %s  (bound: at >= %.0f%% of a ceiling, the memory "
                    + "one below the ridge only)", Roofline.Bound.NEITHER.text(), 100 * Roofline.NEAR_CEILING), width);
        }
        CounterTotals counters = f.counters();
        boolean secondOpinion = !counters.isEmpty() && !counters.ops().isEmpty();
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, row++, String.format(Locale.ROOT, OP_FORMAT, "OP", "NODES", "GB/s", "%MEM", "GFLOP/s",
                "%CMP", "FLOP/B") + (secondOpinion ? String.format(Locale.ROOT, " %-17s", "PMU (2nd opinion)") : "")
                + " VERDICT", width);
        List<RooflineTotals.OpRoofline> ops = roofline.ops().stream()
                .sorted(Comparator.comparingLong(RooflineTotals.OpRoofline::wallNs).reversed()).toList();
        for (int i = 0; row < rows; i++, row++) {
            if (i >= ops.size()) {
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, 0, row, i == 0 ? " (no costed node in this span: needs the operator layer and a graph "
                        + "with MUL_MAT)" : "", width);
                continue;
            }
            RooflineTotals.OpRoofline op = ops.get(i);
            // The rates and intensity do not depend on the ceilings: without them, only the shares are unknown.
            Roofline.Point point = op.point(ceilings == null ? UNKNOWN_CEILINGS : ceilings);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, OP_FORMAT, cut(op.op(), 16),
                    Long.toString(op.nodes()), fixed(point.bytesPerSecond() / 1e9, 1),
                    ceilings == null ? "-" : percent(point.memoryShare()), fixed(point.flopsPerSecond() / 1e9, 1),
                    ceilings == null ? "-" : percent(point.computeShare()), intensity(point.flopsPerByte())));
            if (secondOpinion) {
                line.append(String.format(Locale.ROOT, " %-17s", pmuVerdict(counters, op.op())));
            }
            line.append(' ');
            line.append(ceilings == null ? "- (no ceilings)" : verdict(point.bound(), width - line.length()));
            theme.apply(g, ceilings != null && point.bound() == Roofline.Bound.NEITHER ? Theme.Role.WARN
                    : Theme.Role.NORMAL);
            Cells.put(g, 0, row, line.toString(), width);
        }
    }

    /**
     * Weight bytes one decode token streams, the decode rate the memory ceiling allows with them, and the rate
     * measured in the same span (engine speed while generating, as the header's decode tok/s).
     */
    static String decodeLine(RooflineTotals roofline, double measuredTokensPerSecond) {
        String measured = String.format(Locale.ROOT, "measured %.1f tok/s", measuredTokensPerSecond);
        if (roofline.weightBytesPerDecodeToken() <= 0) {
            return "decode: " + measured + "  (weights per token not seen yet: no decode step read)";
        }
        String weights = "weights " + megabytes(roofline.weightBytesPerDecodeToken()) + " per token";
        if (roofline.ceilings() == null) {
            return "decode: " + measured + "  " + weights;
        }
        double bound = Roofline.decodeBoundTokensPerSecond(roofline.weightBytesPerDecodeToken(), roofline.ceilings());
        double share = measuredTokensPerSecond / bound;
        return String.format(Locale.ROOT, "decode: bound %.1f tok/s  %s%s  (memory ceiling / %s)", bound, measured,
                measuredTokensPerSecond <= 0 ? "" : String.format(Locale.ROOT, " (%.0f%% of bound%s)", 100 * share,
                        share > 1 ? ABOVE_BOUND : ""), weights);
    }

    /** Batch sizes shown at most (those with the most steps). */
    static final int STEP_ROWS = 4;

    /**
     * Decode steps of any size (a server's busy slots): what a step reads (weights once, KV per context position),
     * per batch size the bytes per generated token, intensity, and the decode bound beside the measured rate;
     * then how intensity rises with busy slots and where it reaches the ridge point.
     */
    static List<String> decodeStepLines(RooflineTotals roofline) {
        Roofline.Ceilings ceilings = roofline.ceilings();
        DecodeSteps all = roofline.allDecodeSteps();
        List<String> lines = new java.util.ArrayList<>();
        long overtakes = roofline.kvOvertakesWeightsAtPositions();
        lines.add(String.format(Locale.ROOT, "decode steps (run): weights %s/step, KV %s per context position%s",
                megabytes(Math.round(all.weightBytesPerStep())), megabytes(roofline.kvBytesPerPosition()),
                overtakes > 0 ? String.format(Locale.ROOT, "; KV reads pass the weights past %d positions/step",
                        overtakes) : ""));
        List<DecodeSteps> shown = roofline.decodeSteps().stream()
                .sorted(Comparator.comparingLong(DecodeSteps::steps).reversed())
                .limit(STEP_ROWS)
                .sorted(Comparator.comparingInt(DecodeSteps::batchTokens)).toList();
        for (DecodeSteps step : shown) {
            String bound = "";
            if (ceilings != null) {
                double boundRate = step.boundTokensPerSecond(ceilings);
                bound = String.format(Locale.ROOT, "  bound %.1f tok/s, measured %.1f (%.0f%%)", boundRate,
                        step.measuredTokensPerSecond(), 100 * step.measuredTokensPerSecond() / boundRate);
            } else {
                bound = String.format(Locale.ROOT, "  measured %.1f tok/s", step.measuredTokensPerSecond());
            }
            lines.add(String.format(Locale.ROOT, " %2d/step %5d steps: KV %s/step, %s/token, %.2f FLOP/B%s",
                    step.batchTokens(), step.steps(), megabytes(Math.round(step.kvBytesPerStep())),
                    megabytes(Math.round(step.bytesPerToken())), step.flopsPerByte(), bound));
        }
        if (ceilings != null && all.tokens() > 0) {
            double weights = all.weightBytesPerStep();
            double flopsPerToken = (double) all.flops() / all.tokens();
            double kvPerToken = (double) all.kvBytes() / all.tokens();
            StringBuilder curve = new StringBuilder("intensity by busy slots:");
            for (int slots : new int[] {1, 2, 4, 8, 16}) {
                curve.append(String.format(Locale.ROOT, " %d:%.2f", slots,
                        slots * flopsPerToken / (weights + slots * kvPerToken)));
            }
            double ridgeBatch = roofline.ridgeBatchTokens();
            curve.append(String.format(Locale.ROOT, " FLOP/B; ridge %.2f %s", ceilings.ridgeFlopsPerByte(),
                    Double.isFinite(ridgeBatch) ? String.format(Locale.ROOT, "at ~%.1f slots", ridgeBatch)
                            : "never (KV reads)"));
            lines.add(curve.toString());
        }
        return lines;
    }

    /** The verdict in words, or only its first word where they do not fit (the line above the table has them). */
    static String verdict(Roofline.Bound bound, int columns) {
        String text = bound.text();
        int colon = text.indexOf(':');
        return text.length() <= columns || colon < 0 ? text : text.substring(0, colon);
    }

    /** The counters layer's verdict for the op of that name, or "-" when it did not count it. */
    static String pmuVerdict(CounterTotals counters, String op) {
        for (OpCounters counted : counters.ops()) {
            if (counted.op().equals(op)) {
                CounterFigures.Verdict verdict = counters.verdict(counted);
                return verdict == CounterFigures.Verdict.UNKNOWN ? "-" : verdict.label();
            }
        }
        return "-";
    }

    private static String megabytes(long bytes) {
        return bytes >= 1_000_000 ? String.format(Locale.ROOT, "%.1f MB", bytes / 1e6)
                : String.format(Locale.ROOT, "%.1f kB", bytes / 1e3);
    }

    private static String fixed(double value, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    private static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * share);
    }

    private static String intensity(double flopsPerByte) {
        return Double.isInfinite(flopsPerByte) ? "inf" : String.format(Locale.ROOT, "%.2f", flopsPerByte);
    }

    private static String cut(String text, int width) {
        return text.length() <= width ? text : text.substring(0, width);
    }
}
