package dev.infertop.diff;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The diff as text: what differs between the runs, the token figures, then time per generated token by op type,
 * biggest movers first, with the time outside the traced ops and a total line that the rows above add up to.
 * A change marked {@code *} is significant (rank test over intervals or runs, Holm-adjusted p below 0.05),
 * {@code ~} is not (and could have been), {@code !} is large but undecided (a change of the diff's large share or
 * more without significance), {@code ?} cannot be decided with so few samples; a blank mark was not tested.
 */
public final class DiffText {
    private DiffText() {}

    public static void print(RunDiff diff, PrintStream out) {
        out.printf(Locale.ROOT, "infertop diff  A %s  ->  B %s%n", side(diff.runsA()), side(diff.runsB()));
        Identity.Comparison identity = diff.identity();
        if (identity.differs().isEmpty()) {
            out.println("what differs: nothing recorded (same " + String.join(", ", identity.same().stream()
                    .map(Identity.Property::name).toList()) + ", op shapes)");
        } else {
            out.println("what differs:");
            for (Identity.Property property : identity.differs()) {
                out.printf(Locale.ROOT, "  %-16s A %s%n  %-16s B %s%n", property.name(), property.a(), "", property.b());
            }
            if (!identity.same().isEmpty()) {
                out.println("same: " + String.join(", ", identity.same().stream().map(Identity.Property::name).toList()));
            }
        }
        identity.notes().forEach(note -> out.println("note: " + note));
        out.println();
        out.println(line("%-34s %12s %12s %9s %8s", "TOKENS", "A", "B", "CHANGE", "p"));
        for (Change rate : diff.rates()) {
            out.println(line("%-34s %12s %12s %9s %8s", rate.name() + " (" + rate.unit() + ")",
                    value(rate, rate.a()), value(rate, rate.b()), percent(rate.deltaPercent()), p(rate,
                            diff.largePercent())));
        }
        out.println();
        if (diff.ops().isEmpty()) {
            out.println("per op type: no op figures in " + (diff.runsA().stream().anyMatch(r -> r.ops().isEmpty()) ? "A" : "B")
                    + " (operator layer off, or no graph traced): compare the token figures only");
        } else {
            printOps(diff, out);
        }
        if (!diff.experts().isEmpty()) {
            out.println();
            out.printf(Locale.ROOT, "%-34s %12s %12s %9s%n", "MOE EXPERT SHARE OF SELECTIONS", "A %", "B %", "CHANGE");
            for (Change expert : diff.experts()) {
                out.printf(Locale.ROOT, "%-34s %12.2f %12.2f %+8.2f%n", expert.name(), expert.a(), expert.b(),
                        expert.delta());
            }
        }
        out.println();
        for (String line : undecidedLines(diff)) {
            out.println(line);
        }
        out.println(summary(diff));
    }

    /** A side in the heading: its run and source, or its runs. */
    static String side(List<RunMetrics> runs) {
        if (runs.size() == 1) {
            return runs.getFirst().run().path() + " (" + runs.getFirst().run().source() + ")";
        }
        return runs.size() + " runs: " + String.join(", ", runs.stream().map(r -> r.run().path().toString()).toList());
    }

    /** The closing line: how many figures were tested, and what the test said of them. */
    static String summary(RunDiff diff) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%d figures tested, %d changed significantly",
                diff.testedCount(), diff.significantCount()));
        long large = diff.count(Change.Evidence.LARGE_UNDECIDED);
        long tooFew = diff.count(Change.Evidence.TOO_FEW);
        if (large > 0) {
            line.append(String.format(Locale.ROOT, ", %d large but undecided", large));
        }
        if (tooFew > 0) {
            line.append(String.format(Locale.ROOT, ", %d undecided (too few %s)", tooFew, diff.sampleUnit()));
        }
        return line.append(String.format(Locale.ROOT, " (* Mann-Whitney U over %s, Holm-adjusted p < %.2f; ~ not "
                + "significant; ! large (%s%% or more) but undecided; ? too few %s to decide)", diff.sampleUnit(),
                Change.ALPHA, plain(diff.largePercent()), diff.sampleUnit())).toString();
    }

    /**
     * One line per figure the test left undecided with a large change, and one for figures no data of their size
     * could decide: named as such, never folded into "not significant".
     */
    static List<String> undecidedLines(RunDiff diff) {
        List<String> lines = new java.util.ArrayList<>();
        Change tooFew = null;
        for (Change change : diff.testedFigures()) {
            Change.Evidence evidence = change.evidence(diff.largePercent());
            if (evidence == Change.Evidence.LARGE_UNDECIDED) {
                lines.add(String.format(Locale.ROOT, "large but undecided: %s %s (p %s after Holm, %d against %d %s%s)",
                        change.name(), percent(change.deltaPercent()), Gate.number(change.pAdjusted()),
                        change.samplesA(), change.samplesB(), diff.sampleUnit(), change.decidable() ? ""
                                : ": too few to decide"));
            }
            if (!change.decidable() && tooFew == null) {
                tooFew = change;
            }
        }
        if (tooFew != null) {
            lines.add(String.format(Locale.ROOT, "too few samples: %s against %d reach%s p %s at best, %s after Holm "
                            + "over %d figures: no change here can be called significant", Gate.count(tooFew.samplesA(),
                    diff.sampleUnit()), tooFew.samplesB(), tooFew.samplesA() == 1 ? "es" : "", Gate.number(RankTest.minimumP(tooFew.samplesA(),
                            tooFew.samplesB())), Gate.number(tooFew.pFloor()), diff.testedCount()));
        }
        return lines;
    }

    private static void printOps(RunDiff diff, PrintStream out) {
        out.println("Time per generated token by op type (ms), biggest movers first");
        String header = "%-22s %10s %10s %10s %8s %8s  %-15s %-13s";
        out.println(line(header, "OP", "A", "B", "CHANGE", "%", "p", "CALLS/TOK A>B", "SHARE A>B"));
        for (RunDiff.OpChange op : diff.ops()) {
            Change time = op.time();
            out.println(line(header, clip(op.op(), 22), op.a() == null ? "-" : ms(time.a()),
                    op.b() == null ? "-" : ms(time.b()), signedMs(time.delta()), percent(time.deltaPercent()), p(time, diff.largePercent()),
                    pair(op.a() == null ? Double.NaN : op.a().callsPerToken(),
                            op.b() == null ? Double.NaN : op.b().callsPerToken(), "%.1f"),
                    pair(op.a() == null ? Double.NaN : 100 * op.a().share(),
                            op.b() == null ? Double.NaN : 100 * op.b().share(), "%.1f")));
        }
        Change outside = diff.outside();
        out.println(line(header, outside.name(), ms(outside.a()), ms(outside.b()), signedMs(outside.delta()),
                percent(outside.deltaPercent()), "", "", ""));
        Change total = diff.total();
        out.println(line(header, "total", ms(total.a()), ms(total.b()), signedMs(total.delta()),
                percent(total.deltaPercent()), "", "", ""));
        out.printf(Locale.ROOT, "  (total: llama_decode time, prompt included, per generated token; decode A %s tok/s, "
                + "B %s tok/s)%n", value(diff.rate(RunDiff.DECODE_RATE), diff.rate(RunDiff.DECODE_RATE).a()),
                value(diff.rate(RunDiff.DECODE_RATE), diff.rate(RunDiff.DECODE_RATE).b()));
        out.println();
        String detail = "%-22s %-19s %-19s %-15s %-21s %s";
        out.println(line(detail, "OP", "p50 ms/call A>B", "p99 ms/call A>B", "GB/s A>B", "bytes/token A>B",
                "verdict A>B"));
        for (RunDiff.OpChange op : diff.ops()) {
            RunMetrics.Op a = op.a();
            RunMetrics.Op b = op.b();
            out.println(line(detail, clip(op.op(), 22),
                    pair(a == null ? Double.NaN : a.p50Ms(), b == null ? Double.NaN : b.p50Ms(), "%.4f"),
                    pair(a == null ? Double.NaN : a.p99Ms(), b == null ? Double.NaN : b.p99Ms(), "%.4f"),
                    pair(a == null ? Double.NaN : a.gbPerS(), b == null ? Double.NaN : b.gbPerS(), "%.2f"),
                    bytes(a == null ? Double.NaN : a.bytesPerToken()) + ">" + bytes(b == null ? Double.NaN
                            : b.bytesPerToken()),
                    verdict(a) + ">" + verdict(b)));
        }
    }

    /** A table line without the blanks its empty last columns leave. */
    private static String line(String format, Object... values) {
        return String.format(Locale.ROOT, format, values).stripTrailing();
    }

    /** A figure in its unit's form: rates to 0.1, bytes with a suffix, other figures by magnitude. */
    static String value(Change change, double value) {
        return switch (change.unit()) {
            case "bytes" -> bytes(value);
            case "tok/s" -> Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f", value);
            default -> number(value);
        };
    }

    static String verdict(RunMetrics.Op op) {
        return op == null || op.verdict().isEmpty() ? "-" : op.verdict().split(":")[0];
    }

    static String clip(String text, int width) {
        return text.length() > width ? text.substring(0, width - 1) + "…" : text;
    }

    static String number(double value) {
        if (Double.isNaN(value)) {
            return "-";
        }
        double magnitude = Math.abs(value);
        if (magnitude >= 1e6) {
            return String.format(Locale.ROOT, "%.4g", value);
        }
        return String.format(Locale.ROOT, magnitude >= 100 ? "%.1f" : magnitude >= 1 ? "%.3f" : "%.4f", value);
    }

    /** A percentage as given: 10, 2.5. */
    static String plain(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value)
                : Double.toString(value);
    }

    static String ms(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.4f", value);
    }

    static String signedMs(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%+.4f", value);
    }

    static String percent(double value) {
        return Double.isNaN(value) || Double.isInfinite(value) ? "-" : String.format(Locale.ROOT, "%+.1f%%", value);
    }

    /** The adjusted p-value and its mark (see {@link Change.Evidence}); blank when the figure was not tested. */
    static String p(Change change, double largePercent) {
        if (!change.tested()) {
            return "";
        }
        String value = change.pAdjusted() < 0.0001 ? "<.0001" : String.format(Locale.ROOT, "%.4f", change.pAdjusted());
        return value + " " + change.evidence(largePercent).mark();
    }

    static String pair(double a, double b, String format) {
        return (Double.isNaN(a) ? "-" : String.format(Locale.ROOT, format, a)) + ">"
                + (Double.isNaN(b) ? "-" : String.format(Locale.ROOT, format, b));
    }

    static String bytes(double value) {
        if (Double.isNaN(value)) {
            return "-";
        }
        if (value >= 1e6) {
            return String.format(Locale.ROOT, "%.2fM", value / 1e6);
        }
        if (value >= 1e3) {
            return String.format(Locale.ROOT, "%.1fk", value / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", value);
    }
}
