package dev.infertop.session;

import java.io.PrintStream;

/**
 * Where a stop's time goes, said on stderr when INFERTOP_DEBUG is set, as {@link StartTimeline} does for the
 * start: each step's end as milliseconds since the stop was asked for (q, a signal, -n, the target's exit), e.g.
 * {@code infertop: stop: probes detached at +180 ms}. A slow quit is reported with these lines, not guessed at.
 * Off, a mark costs one field read.
 */
public final class StopTimeline {
    private static final boolean ON = System.getenv("INFERTOP_DEBUG") != null;
    private static long stopNanos = -1;

    private StopTimeline() {}

    /** The stop was asked for (the first call counts). */
    public static synchronized void begin(String why, PrintStream err) {
        if (!ON || stopNanos >= 0) {
            return;
        }
        stopNanos = System.nanoTime();
        err.println("infertop: stop: " + why);
    }

    /** Says that {@code step} of the stop has ended, when INFERTOP_DEBUG is set and a stop began. */
    public static synchronized void mark(String step, PrintStream err) {
        if (!ON || stopNanos < 0) {
            return;
        }
        err.println("infertop: stop: " + step + " at +" + (System.nanoTime() - stopNanos) / 1_000_000 + " ms");
    }
}
