package dev.infertop.session;

import dev.infertop.view.SnapshotView;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a start's time goes, said on stderr when INFERTOP_DEBUG is set: each stage's end as milliseconds since
 * the JVM process started (read from /proc, so the JVM's own start counts), e.g.
 * {@code infertop: start: probes loaded at 1180 ms (+240)}. Off, a mark costs one field read. A slow first
 * screen is reported with these lines, not guessed at (the first interval within 1.5 s).
 */
public final class StartTimeline {
    private static final boolean ON = System.getenv("INFERTOP_DEBUG") != null;
    /** The process's start on System.nanoTime's clock, or -1 when it cannot be read. */
    private static final long PROCESS_START_NANOS = ON ? processStartNanos() : -1;
    private static long lastMillis = 0;
    private static boolean firstIntervalSaid;

    private StartTimeline() {}

    /** Says that {@code stage} has ended, when INFERTOP_DEBUG is set. */
    public static synchronized void mark(String stage, PrintStream err) {
        if (!ON || PROCESS_START_NANOS < 0) {
            return;
        }
        long millis = (System.nanoTime() - PROCESS_START_NANOS) / 1_000_000;
        err.println("infertop: start: " + stage + " at " + millis + " ms (+" + (millis - lastMillis) + ")");
        lastMillis = millis;
    }

    /** {@code view}, marking the first interval it shows (once per run: --follow's later targets are no start). */
    static SnapshotView markingFirstInterval(SnapshotView view, PrintStream err) {
        if (!ON) {
            return view;
        }
        return SnapshotView.afterFirstShown(view, () -> {
            synchronized (StartTimeline.class) {
                if (!firstIntervalSaid) {
                    firstIntervalSaid = true;
                    mark("first interval shown", err);
                }
            }
        });
    }

    /**
     * /proc/self/stat's start time (USER_HZ ticks, always 100 a second, since boot) against /proc/uptime, moved
     * onto nanoTime's clock (the two differ only by time suspended, which a start does not span): good to 10 ms.
     */
    private static long processStartNanos() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long startTicks = Long.parseLong(fields[19]); // field 22 of stat(5), counted after the ")"
            double uptimeSeconds = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
            long nowNanos = System.nanoTime();
            long sinceStartNanos = (long) (uptimeSeconds * 1e9) - startTicks * 10_000_000L;
            return nowNanos - sinceStartNanos;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
