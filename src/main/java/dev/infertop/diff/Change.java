package dev.infertop.diff;

/**
 * One figure in both runs, its change, and the rank test of the per-interval samples behind it (when it has them).
 *
 * @param p           the rank test's two-sided p-value, NaN when the figure was not tested
 * @param pAdjusted   p after Holm's adjustment over every figure tested in the diff, NaN when not tested
 * @param samplesA    intervals behind the test in A (0 when not tested)
 * @param lowerIsBetter whether a fall is an improvement (times) or a regression (rates)
 */
public record Change(String name, String unit, double a, double b, double p, double pAdjusted, int samplesA,
                     int samplesB, boolean lowerIsBetter) {
    /** Adjusted p below which a change is called significant. */
    public static final double ALPHA = 0.05;

    public static Change untested(String name, String unit, double a, double b, boolean lowerIsBetter) {
        return new Change(name, unit, a, b, Double.NaN, Double.NaN, 0, 0, lowerIsBetter);
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

    /** Whether B is worse than A by more than {@code percent} and the change is significant. */
    public boolean regressedBeyond(double percent) {
        if (!significant() || Double.isNaN(deltaPercent())) {
            return false;
        }
        return lowerIsBetter ? deltaPercent() > percent : deltaPercent() < -percent;
    }

    Change withAdjusted(double adjusted) {
        return new Change(name, unit, a, b, p, adjusted, samplesA, samplesB, lowerIsBetter);
    }

    static Change tested(String name, String unit, double a, double b, double[] samplesA, double[] samplesB,
                         boolean lowerIsBetter) {
        if (samplesA.length == 0 || samplesB.length == 0) {
            return untested(name, unit, a, b, lowerIsBetter);
        }
        RankTest.Result result = RankTest.test(samplesA, samplesB);
        return new Change(name, unit, a, b, result.p(), Double.NaN, samplesA.length, samplesB.length, lowerIsBetter);
    }
}
