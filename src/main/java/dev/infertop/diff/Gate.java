package dev.infertop.diff;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code --fail-on PCT} decides: a regression (the decode rate fell, or an op's time per generated token rose,
 * by more than PCT with significance), no regression, or undecided. Undecided is not a pass: a figure the gate reads
 * could not be called significant with the samples given (too few: the least p their sizes allow, after Holm, is
 * not below {@link Change#ALPHA}), or it moved the wrong way by more than PCT without significance (the samples
 * too spread to tell), or nothing the gate reads was tested at all.
 *
 * @param regressions the significant regressions beyond PCT
 * @param undecided   the figures the gate reads that it could not decide, each with its reason
 * @param advice      one sentence: what would decide it (empty unless undecided)
 */
public record Gate(double percent, List<Change> regressions, List<Undecided> undecided, String advice) {

    public enum Verdict {
        NO_REGRESSION("no regression"),
        REGRESSION("regression"),
        UNDECIDED("undecided");

        private final String words;

        Verdict(String words) {
            this.words = words;
        }

        public String words() {
            return words;
        }
    }

    /** A gated figure left undecided: {@code tooFew} when no data of its size could decide it, else too spread. */
    public record Undecided(Change change, boolean tooFew) {}

    public Gate {
        regressions = List.copyOf(regressions);
        undecided = List.copyOf(undecided);
    }

    public Verdict verdict() {
        if (!regressions.isEmpty()) {
            return Verdict.REGRESSION;
        }
        return undecided.isEmpty() && advice.isEmpty() ? Verdict.NO_REGRESSION : Verdict.UNDECIDED;
    }

    public static Gate of(RunDiff diff, double percent) {
        List<Change> regressions = diff.regressions(percent);
        List<Undecided> undecided = new ArrayList<>();
        Change decodeTime = diff.rate(RunDiff.DECODE_TIME);
        double floor = RunDiff.GATE_FLOOR_OF_TOTAL * diff.total().a();
        boolean anyGated = decodeTime.tested();
        if (decodeTime.tested() && !decodeTime.significant()) {
            Change rate = diff.decodeRateTested();
            if (!decodeTime.decidable()) {
                undecided.add(new Undecided(rate, true));
            } else if (rate.worseBeyond(percent)) {
                undecided.add(new Undecided(rate, false));
            }
        }
        for (RunDiff.OpChange op : diff.ops()) {
            Change time = op.time();
            if (!time.tested()) {
                continue;
            }
            anyGated = true;
            if (time.significant()) {
                continue;
            }
            // An op the gate could fail on: one whose time is at least the floor (a rise of 100 % of it would count).
            if (!time.decidable() && time.a() >= floor) {
                undecided.add(new Undecided(time, true));
            } else if (time.decidable() && time.worseBeyond(percent) && time.delta() >= floor) {
                undecided.add(new Undecided(time, false));
            }
        }
        String advice = "";
        if (regressions.isEmpty() && !anyGated) {
            advice = "no figure the gate reads could be tested (no interval samples of decode or of any op): "
                    + "snapshots or --json logs with intervals (-d 0.2), or several runs a side";
        } else if (regressions.isEmpty() && !undecided.isEmpty()) {
            advice = advice(diff, undecided);
        }
        return new Gate(percent, regressions, undecided, advice);
    }

    /** What would decide it: the sample sizes that can reach significance, or more of them where they spread. */
    static String advice(RunDiff diff, List<Undecided> undecided) {
        int figures = (int) diff.testedCount();
        int needed = RankTest.leastPerSide(figures, Change.ALPHA, RankTest.EXACT_MAX);
        String neededText = needed > RankTest.EXACT_MAX ? "over " + RankTest.EXACT_MAX : Integer.toString(needed);
        Undecided first = undecided.stream().filter(Undecided::tooFew).findFirst().orElse(undecided.getFirst());
        Change c = first.change();
        String unit = diff.sampleUnit();
        if (first.tooFew()) {
            String sizes = String.format(Locale.ROOT, "%s against %d reach%s p %s at best, %s after Holm over %d "
                            + "figures", count(c.samplesA(), unit), c.samplesB(), c.samplesA() == 1 ? "es" : "", number(RankTest.minimumP(c.samplesA(),
                    c.samplesB())), number(c.pFloor()), figures);
            if (diff.betweenRuns()) {
                return sizes + ": " + neededText + " runs a side would decide it (diff --turns " + neededText + ")";
            }
            return sizes + ": " + neededText + " intervals a side would decide it (-d 0.2, longer runs), or "
                    + neededText + " runs a side (diff --turns " + neededText + ")";
        }
        String spread = String.format(Locale.ROOT, "%s %+.1f%% is large but undecided (p %s after Holm): the samples "
                + "spread too widely to call it", c.name(), c.deltaPercent(), number(c.pAdjusted()));
        if (diff.betweenRuns()) {
            return spread + ": more runs a side (now " + diff.runsA().size() + " and " + diff.runsB().size()
                    + "), taken in turns on a quieter machine";
        }
        return spread + ": runs in turns (diff --turns " + neededText + "), where drift between runs counts as noise, "
                + "or longer runs";
    }

    /** The one line the gate prints on standard error. */
    public String line() {
        return switch (verdict()) {
            case REGRESSION -> String.format(Locale.ROOT, "regressed beyond %s%%: %s", percent,
                    String.join(", ", regressions.stream().map(c -> String.format(Locale.ROOT, "%s %+.1f%% (p %.4f)",
                            c.name(), c.deltaPercent(), c.pAdjusted())).toList()));
            case UNDECIDED -> String.format(Locale.ROOT, "undecided at %s%%%s: %s", percent, undecided.isEmpty() ? ""
                    : " (" + String.join(", ", undecided.stream().map(u -> String.format(Locale.ROOT,
                    "%s %+.1f%% %s", u.change().name(), u.change().deltaPercent(), u.tooFew() ? "too few samples"
                            : "large but undecided")).toList()) + ")", advice);
            case NO_REGRESSION -> String.format(Locale.ROOT, "no regression beyond %s%%", percent);
        };
    }

    /** "1 interval", "3 runs". */
    static String count(int n, String plural) {
        return n + " " + (n == 1 ? plural.substring(0, plural.length() - 1) : plural);
    }

    static String number(double p) {
        return p < 0.0001 ? String.format(Locale.ROOT, "%.2g", p) : String.format(Locale.ROOT, "%.4f", p);
    }
}
