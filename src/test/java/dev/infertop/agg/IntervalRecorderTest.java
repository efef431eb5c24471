package dev.infertop.agg;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

class IntervalRecorderTest {
    @Test
    void eachIntervalHoldsExactlyTheValuesRecordedSinceTheLastOne() {
        IntervalRecorder recorder = new IntervalRecorder(2);
        for (int i = 1; i <= 1000; i++) {
            recorder.recordValue(i);
        }
        Histogram first = recorder.getIntervalHistogram(null);
        assertEquals(1000, first.getTotalCount());
        assertEquals(1000, first.getMaxValue(), 1000 * 0.01);
        recorder.recordValue(5_000);
        recorder.recordValue(7_000);
        Histogram second = recorder.getIntervalHistogram(null);
        assertNotSame(first, second);
        assertEquals(2, second.getTotalCount());
        assertEquals(1000, first.getTotalCount(), "an interval taken is not touched by later values");
        // Recycling the first: it is emptied and records the next interval.
        recorder.recordValue(42);
        Histogram third = recorder.getIntervalHistogram(first);
        assertEquals(1, third.getTotalCount());
        assertEquals(42, third.getMinValue());
        Histogram fourth = recorder.getIntervalHistogram(second);
        assertEquals(0, fourth.getTotalCount());
        assertSame(first, fourth, "the histogram given back records the interval after the one it was given for");
    }
}
