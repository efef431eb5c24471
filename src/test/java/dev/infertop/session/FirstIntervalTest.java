package dev.infertop.session;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The live view's first screen comes after 0.25 s; JSON and text intervals are all -d long (-n N = N × -d). */
class FirstIntervalTest {
    private static final long SECOND_NS = 1_000_000_000L;

    @Test
    void theLiveViewsFirstIntervalIsAQuarterSecondAtMost() {
        assertEquals(250_000_000L, TargetSession.firstIntervalNs(TraceOptions.OutputMode.LIVE, SECOND_NS));
        assertEquals(250_000_000L, TargetSession.firstIntervalNs(TraceOptions.OutputMode.LIVE, 10 * SECOND_NS));
        assertEquals(100_000_000L, TargetSession.firstIntervalNs(TraceOptions.OutputMode.LIVE, 100_000_000L));
    }

    @Test
    void jsonTextAndQuietIntervalsAreAllAsAsked() {
        for (TraceOptions.OutputMode output : new TraceOptions.OutputMode[] {TraceOptions.OutputMode.JSON,
                TraceOptions.OutputMode.BATCH, TraceOptions.OutputMode.QUIET}) {
            assertEquals(SECOND_NS, TargetSession.firstIntervalNs(output, SECOND_NS), output.toString());
            assertEquals(5 * SECOND_NS, TargetSession.firstIntervalNs(output, 5 * SECOND_NS), output.toString());
        }
    }
}
