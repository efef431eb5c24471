package dev.infertop.session;

import dev.infertop.model.SafeText;
import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What ends infertop when something no code path handles happens: an {@code Error} (OutOfMemoryError,
 * StackOverflowError) anywhere, or any exception that ends one of its threads. Whatever the thread, the end is
 * the same: one line on standard error (never a stack trace, unless INFERTOP_DEBUG), every probe detached
 * and the terminal restored by the run's one exit path, and exit status {@link #EXIT_STATUS}.
 * <ul>
 * <li>On the main thread (the collector runs there) the failure unwinds through the session's finally
 * blocks, which detach and restore as on any other end; {@code cli.Main} then prints the line.
 * <li>On another thread (the live view's, the budget's, a snapshot writer's) the default uncaught-exception
 * handler installed here keeps the line and calls {@link System#exit}: the run's shutdown hook stops the
 * collector, detaches the probes, restores the terminal and then prints the line where it can be read.
 * </ul>
 * Not {@code -XX:+ExitOnOutOfMemoryError}: the JVM then exits at once without shutdown hooks. The kernel
 * does drop uprobes attached through perf_event fds with the process, but a launched command would be left
 * running, a live view's terminal in raw mode on the alternate screen, a half-written snapshot's temporary
 * directory behind. A reserve of heap, dropped at the first failure, leaves room for that exit path when the
 * heap really is full.
 */
public final class FatalErrors {
    private FatalErrors() {}

    /** sysexits EX_SOFTWARE, as for any internal error. */
    public static final int EXIT_STATUS = 70;

    /** Freed at the first failure: what the exit path needs (its lines, the detach) where the heap ran out. */
    @SuppressWarnings("unused")
    private static volatile byte[] reserve = new byte[1 << 20];

    private static final AtomicReference<String> line = new AtomicReference<>();
    private static final java.util.concurrent.atomic.AtomicBoolean printed = new java.util.concurrent.atomic.AtomicBoolean();
    /** Set while a trace run's exit path is there to print the line after the terminal is restored. */
    private static volatile boolean deferred;
    private static volatile PrintStream err = System.err;

    /** Catches what ends any thread other than main; {@code err} is where the line goes. */
    public static void install(PrintStream stderr) {
        err = stderr;
        Thread.setDefaultUncaughtExceptionHandler(FatalErrors::uncaught);
    }

    /** Frees the reserve: the heap may be full, and the exit path must still run. */
    static void releaseReserve() {
        reserve = null;
    }

    /** Whether a fatal failure was reported: infertop's exit status is then {@link #EXIT_STATUS}. */
    public static boolean happened() {
        return line.get() != null;
    }

    /**
     * Reports a failure that reached the main thread's top (after the session's finally blocks ran): prints the
     * line, or the one an earlier failure on another thread left; returns {@link #EXIT_STATUS}.
     */
    public static int report(Throwable failure) {
        releaseReserve();
        if (line.compareAndSet(null, line(failure, null))) {
            debug(failure);
        }
        printPending(err);
        return EXIT_STATUS;
    }

    private static void uncaught(Thread thread, Throwable failure) {
        releaseReserve();
        if (!line.compareAndSet(null, line(failure, thread.getName()))) {
            return; // already on the way out
        }
        debug(failure);
        if (!deferred) {
            printPending(err);
        }
        // Not on this thread: were it a shutdown hook's, exit would wait for itself. A daemon, so that where an
        // exit is under way already it blocks harmlessly.
        Thread.ofPlatform().name("infertop-fatal").daemon().start(() -> System.exit(EXIT_STATUS));
    }

    /** "infertop: fatal error in thread infertop-budget: java.lang.OutOfMemoryError: Java heap space (...)" */
    static String line(Throwable failure, String thread) {
        String what = failure instanceof Error ? "fatal error" : "internal error";
        return "infertop: " + what + (thread == null ? "" : " in thread " + thread) + ": "
                + SafeText.of(String.valueOf(failure))
                + " (run with INFERTOP_DEBUG=1 for details, and please report it)";
    }

    private static void debug(Throwable failure) {
        if (System.getenv("INFERTOP_DEBUG") != null) {
            failure.printStackTrace(err);
        }
    }

    /**
     * While a trace run has its terminal (the live view's screen would swallow a line), a failure on another
     * thread leaves its line to {@link #printPending}, called once the terminal is restored.
     */
    static void defer(boolean defer) {
        deferred = defer;
    }

    /** The line a failure left, printed now if it was not yet (once in all). */
    static void printPending(PrintStream to) {
        String pending = line.get();
        if (pending != null && printed.compareAndSet(false, true)) {
            to.println(pending);
            to.flush();
        }
    }
}
