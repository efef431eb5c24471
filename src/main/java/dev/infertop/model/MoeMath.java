package dev.infertop.model;

/** Imbalance of expert loads. */
public final class MoeMath {
    private MoeMath() {}

    /**
     * Coefficient of variation of the counts: population standard deviation / mean. 0 is perfect balance;
     * one expert taking everything of n gives sqrt(n - 1). NaN for no counts or an all-zero row.
     */
    public static double coefficientOfVariation(long[] counts) {
        if (counts.length == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (long c : counts) {
            sum += c;
        }
        double mean = sum / counts.length;
        if (mean == 0) {
            return Double.NaN;
        }
        double squares = 0;
        for (long c : counts) {
            squares += (c - mean) * (c - mean);
        }
        return Math.sqrt(squares / counts.length) / mean;
    }
}
