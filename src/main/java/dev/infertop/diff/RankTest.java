package dev.infertop.diff;

import java.util.Arrays;

/**
 * The Mann-Whitney U test (Wilcoxon rank-sum), two-sided: do values from B tend to be larger or smaller than values
 * from A? It assumes neither run's values are normal (per-interval times have long tails: an interval in which the
 * machine was busy elsewhere) and uses only their order, so one wild interval moves it by one rank, not by its size.
 * Exact (the distribution of U counted over every arrangement) when there are no ties and at most
 * {@link #EXACT_MAX} values per side; otherwise the normal approximation with the tie correction and a continuity
 * correction.
 */
public final class RankTest {
    /** Per side, the largest sample for which U's distribution is counted exactly (its table is n1·n1·n2 cells). */
    static final int EXACT_MAX = 50;

    private RankTest() {}

    /**
     * @param u     U of sample A: the number of (a, b) pairs with a greater than b, ties counting one half
     * @param p     the two-sided p-value
     * @param exact whether p was counted exactly (no ties, small samples) rather than approximated
     */
    public record Result(double u, double p, boolean exact) {}

    /** The test of {@code a} against {@code b}; p is 1 when either is empty. */
    public static Result test(double[] a, double[] b) {
        int n1 = a.length;
        int n2 = b.length;
        if (n1 == 0 || n2 == 0) {
            return new Result(0, 1, true);
        }
        int n = n1 + n2;
        double[] all = new double[n];
        System.arraycopy(a, 0, all, 0, n1);
        System.arraycopy(b, 0, all, n1, n2);
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(all[x], all[y]));
        double[] rank = new double[n];
        double tieTerm = 0; // sum of t^3 - t over groups of t tied values
        for (int i = 0; i < n; ) {
            int j = i;
            while (j + 1 < n && all[order[j + 1]] == all[order[i]]) {
                j++;
            }
            double average = (i + j) / 2.0 + 1;
            for (int k = i; k <= j; k++) {
                rank[order[k]] = average;
            }
            double t = j - i + 1;
            tieTerm += t * t * t - t;
            i = j + 1;
        }
        double rankSumA = 0;
        for (int i = 0; i < n1; i++) {
            rankSumA += rank[i];
        }
        double u = rankSumA - n1 * (n1 + 1) / 2.0;
        if (tieTerm == 0 && n1 <= EXACT_MAX && n2 <= EXACT_MAX) {
            return new Result(u, exactP((int) Math.round(u), n1, n2), true);
        }
        double mean = n1 * (double) n2 / 2;
        double variance = n1 * (double) n2 / 12 * ((n + 1) - tieTerm / ((double) n * (n - 1)));
        if (variance <= 0) {
            return new Result(u, 1, false); // every value equal
        }
        double z = Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
        return new Result(u, Math.min(1, 2 * upperNormalTail(z)), false);
    }

    /**
     * The smallest two-sided p the test can give samples of n1 and n2 values: that of two samples wholly apart (U = 0),
     * counted as {@link #test} counts it: 2 / C(n1 + n2, n1) exactly (3 against 3: 0.1; 4 against 4: 2/70), the normal
     * approximation beyond {@link #EXACT_MAX}; 1 when either is empty. Below it, no data of that size can go.
     */
    public static double minimumP(int n1, int n2) {
        if (n1 <= 0 || n2 <= 0) {
            return 1;
        }
        if (n1 <= EXACT_MAX && n2 <= EXACT_MAX) {
            double arrangements = 1; // C(n1 + n2, n1), built up as a product of ratios (exact for these sizes)
            for (int k = 1; k <= n1; k++) {
                arrangements = arrangements * (n2 + k) / k;
            }
            return Math.min(1, 2 / arrangements);
        }
        double n = n1 + (double) n2;
        double z = Math.max(0, n1 * (double) n2 / 2 - 0.5) / Math.sqrt(n1 * (double) n2 / 12 * (n + 1));
        return Math.min(1, 2 * upperNormalTail(z));
    }

    /**
     * The fewest values a side with which {@code figures} figures tested together can each still be called
     * significant at {@code alpha} after Holm (the first step compares the smallest p with alpha / figures), or
     * {@code max + 1} when even {@code max} a side cannot.
     */
    public static int leastPerSide(int figures, double alpha, int max) {
        for (int n = 1; n <= max; n++) {
            if (Math.max(1, figures) * minimumP(n, n) < alpha) {
                return n;
            }
        }
        return max + 1;
    }

    /** Two-sided: twice the smaller tail at {@code u} of U's distribution for samples of n1 and n2 without ties. */
    static double exactP(int u, int n1, int n2) {
        double[] counts = uCounts(n1, n2);
        double total = 0;
        double below = 0;
        double above = 0;
        for (int k = 0; k < counts.length; k++) {
            total += counts[k];
            if (k <= u) {
                below += counts[k];
            }
            if (k >= u) {
                above += counts[k];
            }
        }
        return Math.min(1, 2 * Math.min(below, above) / total);
    }

    /**
     * How many arrangements of n1 A values and n2 B values give each U (index), all C(n1+n2, n1) of them: the count
     * for m of A and k of B is that for m−1 and k at U−k (the largest value is an A, above all k B values) plus that
     * for m and k−1 at U (it is a B); built up k by k in one table per m, by additions only.
     */
    static double[] uCounts(int n1, int n2) {
        int max = n1 * n2;
        double[][] table = new double[n1 + 1][max + 1];
        for (int m = 0; m <= n1; m++) {
            table[m][0] = 1; // k = 0: U is 0 whatever m
        }
        for (int k = 1; k <= n2; k++) {
            for (int m = 1; m <= n1; m++) {
                double[] row = table[m];
                double[] shorter = table[m - 1]; // already for k
                for (int v = m * k; v >= k; v--) {
                    row[v] += shorter[v - k];
                }
            }
        }
        return table[n1];
    }

    /** P(Z > z) for a standard normal Z: erfc(z/√2)/2, with erfc to a relative error below 1.2e-7. */
    static double upperNormalTail(double z) {
        return erfc(z / Math.sqrt(2)) / 2;
    }

    /** Numerical Recipes' erfc (Chebyshev fit), for x of any sign. */
    static double erfc(double x) {
        double z = Math.abs(x);
        double t = 1 / (1 + 0.5 * z);
        double r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
                + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
                + t * (-0.82215223 + t * 0.17087277)))))))));
        return x >= 0 ? r : 2 - r;
    }

    /**
     * Holm's step-down adjustment of p-values tested together (one diff's rows): each is compared as if it were
     * the only one, yet the chance that any of them reads as significant when nothing changed stays at most alpha.
     * Adjusted values are returned in the input order; NaN marks a value that was not tested and is kept.
     */
    public static double[] holm(double[] p) {
        int tested = 0;
        for (double v : p) {
            if (!Double.isNaN(v)) {
                tested++;
            }
        }
        Integer[] order = new Integer[p.length];
        for (int i = 0; i < p.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(Double.isNaN(p[x]) ? 2 : p[x], Double.isNaN(p[y]) ? 2 : p[y]));
        double[] adjusted = new double[p.length];
        double running = 0;
        for (int rank = 0; rank < p.length; rank++) {
            int i = order[rank];
            if (Double.isNaN(p[i])) {
                adjusted[i] = Double.NaN;
                continue;
            }
            running = Math.max(running, Math.min(1, (tested - rank) * p[i]));
            adjusted[i] = running;
        }
        return adjusted;
    }
}
