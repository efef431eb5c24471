package dev.infertop.process;

import java.time.Duration;

/**
 * How many times longer than usual infertop waits for its attach-time work: reading each of the target's
 * libraries ({@link ScanTimeLimit}) and the calibration child. The limits exist so that a crafted library cannot
 * hold the probe set (and Ctrl-C) for long; their defaults are sized for a real machine, and an emulated one (QEMU
 * without KVM) or a slow board beside a busy engine can need several times more. One factor for the whole
 * process, set once from the command line before anything is attached.
 */
public final class AttachPatience {
    /** The most a user may ask for: a limit stays a limit. */
    public static final int MAX_FACTOR = 100;
    /** Said after each message about a limit reached, so the user knows the way out. */
    public static final String HINT = " (--patience N multiplies this limit)";

    private static volatile int factor = 1;

    private AttachPatience() {}

    /** Sets the factor: 1 (the default) to {@link #MAX_FACTOR}. */
    public static void set(int newFactor) {
        if (newFactor < 1 || newFactor > MAX_FACTOR) {
            throw new IllegalArgumentException("must be 1 to " + MAX_FACTOR + ", not " + newFactor);
        }
        factor = newFactor;
    }

    public static int factor() {
        return factor;
    }

    public static long scaledMs(long limitMs) {
        return limitMs * factor;
    }

    public static Duration scaled(Duration limit) {
        return limit.multipliedBy(factor);
    }
}
