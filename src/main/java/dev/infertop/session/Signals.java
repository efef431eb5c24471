package dev.infertop.session;

import dev.infertop.ffi.LibC;
import dev.infertop.model.Layer;
import dev.infertop.snapshot.SnapshotTaker;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/** The run's signals besides the shutdown ones (SIGINT, SIGTERM, SIGHUP go through {@link TraceRun}'s hook). */
final class Signals {
    private Signals() {}

    /**
     * SIGINT stops infertop even where it started with SIGINT ignored. A shell without job control (a script)
     * starts its background jobs so, that a Ctrl-C meant for the foreground leaves them be, and a JVM keeps an
     * ignored shutdown signal ignored: {@code infertop --json -p PID > log &} in a script, then {@code kill -INT},
     * left infertop tracing, its probes in the target (our own bench-alternate.sh, started in the background, met
     * it). bpftrace and BCC's tools stop on SIGINT however they were started; so does infertop, as the JVM's own
     * SIGINT handler would: exit 130 through the shutdown hooks. An ignored SIGHUP stays ignored: that is nohup,
     * asked for by the user.
     */
    @SuppressWarnings("removal")
    static void stopOnSigintEvenWhereIgnored() {
        try {
            if (!ignores(Files.readString(Path.of("/proc/self/status")), LibC.SIGINT)) {
                return; // the JVM's handler is in place: leave it
            }
            MemorySegment ignoredBefore = (MemorySegment) LibC.signal$handle().invokeExact(LibC.SIGINT, MemorySegment.NULL);
            sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> System.exit(128 + LibC.SIGINT));
        } catch (Throwable e) {
            // no /proc, no signal(2), or the JVM keeps SIGINT: SIGTERM still stops infertop
        }
    }

    /** Whether a /proc/PID/status text's SigIgn mask holds {@code signal}. */
    static boolean ignores(String procStatus, int signal) {
        for (String line : procStatus.split("\n")) {
            if (line.startsWith("SigIgn:")) {
                long mask = Long.parseUnsignedLong(line.substring("SigIgn:".length()).strip(), 16);
                return (mask & (1L << (signal - 1))) != 0;
            }
        }
        return false;
    }

    /** SIGUSR1 writes a snapshot directory at the next tick. */
    @SuppressWarnings("removal")
    static void snapshotOnUsr1(RunControl control) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("USR1"), signal -> control.requestSnapshot(SnapshotTaker.Trigger.SIGUSR1));
        } catch (IllegalArgumentException e) {
            // no SIGUSR1 here (or the JVM keeps it): the live view's key and the options still work
        }
    }

    /** SIGUSR2 switches the operator layer off and on, live (applied at the next interval). */
    @SuppressWarnings("removal")
    static void operatorToggleOnUsr2(TickPolicy policy) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("USR2"), signal -> policy.toggles.add(Layer.OPERATOR));
        } catch (IllegalArgumentException e) {
            // no SIGUSR2 on this platform: the live view's key still works
        }
    }
}
