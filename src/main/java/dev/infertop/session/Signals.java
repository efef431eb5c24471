package dev.infertop.session;

import dev.infertop.model.Layer;

/** The run's signals besides the shutdown ones (SIGINT, SIGTERM, SIGHUP go through {@link TraceSession}'s hook). */
final class Signals {
    private Signals() {}

    /** SIGUSR1 writes a snapshot directory at the next tick. */
    @SuppressWarnings("removal")
    static void snapshotOnUsr1(RunControl control) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("USR1"), signal -> control.requestSnapshot("SIGUSR1"));
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
