package dev.infertop.session;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SignalsTest {
    /** /proc/PID/status of a script's background job: SIGINT (2) and SIGQUIT (3) ignored, bit N-1 for signal N. */
    private static final String BACKGROUND_JOB = """
            Name:\tjava
            SigQ:\t0/95391
            SigPnd:\t0000000000000000
            ShdPnd:\t0000000000000000
            SigBlk:\t0000000000000000
            SigIgn:\t0000000000000006
            SigCgt:\t0000000000004000
            """;

    @Test
    void theSigIgnMaskSaysWhichSignalsAreIgnored() {
        assertTrue(Signals.ignores(BACKGROUND_JOB, 2), "SIGINT");
        assertTrue(Signals.ignores(BACKGROUND_JOB, 3), "SIGQUIT");
        assertFalse(Signals.ignores(BACKGROUND_JOB, 1), "SIGHUP");
        assertFalse(Signals.ignores(BACKGROUND_JOB, 15), "SIGTERM");
        assertFalse(Signals.ignores(BACKGROUND_JOB.replace("0000000000000006", "0000000000000004"), 2));
        assertTrue(Signals.ignores("SigIgn:\t8000000000000000\n", 64), "the last real-time signal");
    }

    @Test
    void aStatusWithoutTheMaskIgnoresNothing() {
        assertFalse(Signals.ignores("Name:\tjava\n", 2));
    }
}
