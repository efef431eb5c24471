package dev.infertop.agg;

import org.HdrHistogram.Histogram;

/**
 * HdrHistogram's Recorder pattern (record into one histogram, swap it out for each interval) without its
 * cross-thread phaser: infertop's collector thread both records and takes the intervals, so a plain swap is
 * enough, and the phaser's two atomic operations per value were the largest single cost of recording op
 * times (~8 % of infertop's CPU under the operator layer, by perf). Collector thread only.
 */
final class IntervalRecorder {
    private final int significantDigits;
    private Histogram active;

    IntervalRecorder(int significantDigits) {
        this.significantDigits = significantDigits;
        this.active = new Histogram(significantDigits);
    }

    void recordValue(long value) {
        active.recordValue(value);
    }

    /**
     * The values recorded since the last call. {@code recycle} (the histogram this returned the time before,
     * or null) is emptied and records from now on: as with Recorder, the caller must be done with it.
     */
    Histogram getIntervalHistogram(Histogram recycle) {
        Histogram interval = active;
        if (recycle == null || recycle == interval) {
            recycle = new Histogram(significantDigits);
        } else {
            recycle.reset();
        }
        active = recycle;
        return interval;
    }
}
