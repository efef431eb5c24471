package dev.infertop.session;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.io.TargetLog;
import dev.infertop.snapshot.SnapshotTaker;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the stages of a run, the shutdown hook, the signal handlers and the live view's keys share: the options,
 * where messages go, the session being traced (for a stop from any thread), and the run-wide state that lives
 * across the sessions of --follow (the live screen, snapshot numbers, the launched command's log).
 */
final class RunControl {
    final TraceOptions options;
    final PrintStream out;
    final PrintStream err;
    /** The version written into snapshot directories. */
    final String version;

    /** The full-screen view, once started; lives across the sessions of --follow. */
    volatile LiveScreen live;
    /** The session being traced, for the shutdown hook and the live view's quit. */
    volatile SessionResources current;
    /** q, a signal, or a failure: stop tracing, stop waiting for a process to follow. */
    volatile boolean stopping;
    volatile double intervalSeconds;
    /** Snapshot numbers, run-wide: --follow's sessions never reuse one. */
    final AtomicInteger snapshotNumbers = new AtomicInteger();
    /** The launched command's log, held open (the command appends through /proc/PID/fd/N) until the run ends. */
    TargetLog targetLog;

    RunControl(TraceOptions options, PrintStream out, PrintStream err, String version) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.version = version;
        this.intervalSeconds = options.delaySeconds();
    }

    /** Stop everything: the collector, the live view, a wait for a process to follow. Any thread. */
    void stop() {
        StopTimeline.begin("asked", err);
        stopping = true;
        // The user waits for the detach: not at the nice value infertop yields to the engine with.
        OwnPriority.raiseForQuit();
        SessionResources resources = current;
        if (resources != null) {
            resources.stopCollector();
            // The kernel is slow to unregister a uprobe: start now, while the collector drains what is
            // in the ring and freezes its final snapshot.
            resources.detachInBackground();
        }
        LiveScreen view = live;
        if (view != null) {
            view.monitor.requestQuit();
        }
    }

    /** A message for the user: on stderr, or in the live view's status line while the screen is up. */
    void notice(String text) {
        LiveScreen view = live;
        if (view == null || !view.notice(text, stopping)) {
            err.println(text);
        }
    }

    void throwLiveFailure() {
        LiveScreen view = live;
        Throwable failure = view == null ? null : view.monitor.failure();
        if (failure != null) {
            closeLive();
            if (failure instanceof Error error) {
                throw error; // as on any other thread: FatalErrors' one line and exit status
            }
            throw new IllegalStateException("live view failed: " + failure, failure);
        }
    }

    void closeLive() {
        LiveScreen view = live;
        if (view != null) {
            view.close();
        }
    }

    void requestSnapshot(SnapshotTaker.Trigger trigger) {
        SessionResources resources = current;
        SnapshotTaker taker = resources == null ? null : resources.snapshots;
        if (taker != null) {
            taker.request(trigger);
        }
    }
}
