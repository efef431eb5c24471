package dev.infertop.model;

import org.HdrHistogram.Histogram;

import java.util.Arrays;

/** A latency histogram frozen as values at fixed percentiles (in milliseconds), for a percentile plot. */
public record LatencyDistribution(double[] percentiles, double[] valuesMs) {
    /** The percentiles a plot shows: where the tail lives, like HdrHistogram's own percentile output. */
    public static final double[] PLOT_PERCENTILES = {0, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};

    public static final LatencyDistribution EMPTY = new LatencyDistribution(new double[0], new double[0]);

    public LatencyDistribution {
        percentiles = percentiles.clone();
        valuesMs = valuesMs.clone();
        if (percentiles.length != valuesMs.length) {
            throw new IllegalArgumentException("percentiles and values differ in length");
        }
    }

    public static LatencyDistribution ofNanos(Histogram histogram) {
        if (histogram == null || histogram.getTotalCount() == 0) {
            return EMPTY;
        }
        long[] ns = Percentiles.valuesAt(histogram, PLOT_PERCENTILES);
        double[] values = new double[PLOT_PERCENTILES.length];
        for (int i = 0; i < values.length; i++) {
            double p = PLOT_PERCENTILES[i];
            values[i] = (p == 0 ? histogram.getMinValue() : p == 100 ? histogram.getMaxValue() : ns[i]) / 1e6;
        }
        return new LatencyDistribution(PLOT_PERCENTILES, values);
    }

    public int size() {
        return percentiles.length;
    }

    public double percentile(int i) {
        return percentiles[i];
    }

    public double valueMs(int i) {
        return valuesMs[i];
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LatencyDistribution d && Arrays.equals(percentiles, d.percentiles)
                && Arrays.equals(valuesMs, d.valuesMs);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(percentiles) + Arrays.hashCode(valuesMs);
    }

    @Override
    public String toString() {
        return "LatencyDistribution" + Arrays.toString(percentiles) + "=" + Arrays.toString(valuesMs);
    }
}
