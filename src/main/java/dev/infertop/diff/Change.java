package dev.infertop.diff;

/**
 * One figure in both runs (or both sets of runs), its change, and the rank test of the samples behind it (when it
 * has them): per-interval samples of one run a side, or one value per run where a side has several.
 *
 * @param p           the rank test's two-sided p-value, NaN when the figure was not tested
 * @param pAdjusted   p after Holm's adjustment over every figure tested in the diff, NaN when not tested
 * @param pFloor      the least adjusted p these sample sizes allow (every figure of the diff as far apart as its
 *                    samples can be, Holm as above): at or above {@link #ALPHA}, no data of this size can be
 *                    called significant; NaN when not tested
 * @param samplesA    samples behind the test in A, intervals or runs (0 when not tested)
 * @param lowerIsBetter whether a fall is an improvement (times) or a regression (rates)
 */
public record Change(String name, String unit, double a, double b, double p, double pAdjusted, double pFloor,
                     int samplesA, int samplesB, boolean lowerIsBetter) {
    /** Adjusted p below which a change is called significant. */
    public static final double ALPHA = 0.05;

    /** What the test says of a figure. */
    public enum Evidence {
        /** No samples to test (a figure a snapshot keeps for the whole run only). */
        UNTESTED(" ", "untested"),
        SIGNIFICANT("*", "significant"),
        /** Could have been called significant with these samples, and the change is small. */
        NOT_SIGNIFICANT("~", "not significant"),
        /** The change is at least the diff's "large" share, without significance: little evidence, a big effect. */
        LARGE_UNDECIDED("!", "large but undecided"),
        /** Too few samples for any change to be called significant: the test cannot decide it either way. */
        TOO_FEW("?", "too few samples to decide");

        private final String mark;
        private final String words;

        Evidence(String mark, String words) {
            this.mark = mark;
            this.words = words;
        }

        public String mark() {
            return mark;
        }

        public String words() {
            return words;
        }
    }

    public static Change untested(String name, String unit, double a, double b, boolean lowerIsBetter) {
        return new Change(name, unit, a, b, Double.NaN, Double.NaN, Double.NaN, 0, 0, lowerIsBetter);
    }

    public double delta() {
        return b - a;
    }

    /** The change relative to A, in percent; NaN when A is 0 or missing. */
    public double deltaPercent() {
        return a == 0 || Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : 100 * (b - a) / a;
    }

    public boolean tested() {
        return !Double.isNaN(pAdjusted);
    }

    public boolean significant() {
        return tested() && pAdjusted < ALPHA;
    }

    /** Whether data of these sizes could have been called significant at all. */
    public boolean decidable() {
        return tested() && pFloor < ALPHA;
    }

    /** The evidence, a change of at least {@code largePercent} (either way) without significance counting as large. */
    public Evidence evidence(double largePercent) {
        if (!tested()) {
            return Evidence.UNTESTED;
        }
        if (significant()) {
            return Evidence.SIGNIFICANT;
        }
        if (Math.abs(deltaPercent()) >= largePercent) {
            return Evidence.LARGE_UNDECIDED;
        }
        return decidable() ? Evidence.NOT_SIGNIFICANT : Evidence.TOO_FEW;
    }

    /** Whether B is worse than A by more than {@code percent}, whatever the test says. */
    public boolean worseBeyond(double percent) {
        if (Double.isNaN(deltaPercent())) {
            return false;
        }
        return lowerIsBetter ? deltaPercent() > percent : deltaPercent() < -percent;
    }

    /** Whether B is worse than A by more than {@code percent} and the change is significant. */
    public boolean regressedBeyond(double percent) {
        return significant() && worseBeyond(percent);
    }

    Change withAdjusted(double adjusted, double floor) {
        return new Change(name, unit, a, b, p, adjusted, floor, samplesA, samplesB, lowerIsBetter);
    }

    /** The same test under another name and direction: the decode rate read through its time per token's test. */
    Change asFigure(String newName, String newUnit, double newA, double newB, boolean newLowerIsBetter) {
        return new Change(newName, newUnit, newA, newB, p, pAdjusted, pFloor, samplesA, samplesB, newLowerIsBetter);
    }

    static Change tested(String name, String unit, double a, double b, double[] samplesA, double[] samplesB,
                         boolean lowerIsBetter) {
        if (samplesA.length == 0 || samplesB.length == 0) {
            return untested(name, unit, a, b, lowerIsBetter);
        }
        RankTest.Result result = RankTest.test(samplesA, samplesB);
        return new Change(name, unit, a, b, result.p(), Double.NaN, Double.NaN, samplesA.length, samplesB.length,
                lowerIsBetter);
    }
}
