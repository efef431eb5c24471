package dev.infertop.session;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.io.TargetLog;
import dev.infertop.snapshot.SnapshotTaker;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the stages of a run, the shutdown hook, the signal handlers and the live view's keys share: the run's
 * context, which never changes (the options, where output and messages go, the version), and the few things that
 * do, each changed through a method of its own and safe to read from any thread: the stop, the session being
 * traced (for a stop from any thread), and what lives across the sessions of --follow (the live screen, its
 * interval, snapshot numbers, the launched command's log). What belongs to one session (its tick policy, its
 * snapshot writer) is that session's, in {@link SessionResources}.
 */
final class RunControl {
    final TraceOptions options;
    final PrintStream out;
    final PrintStream err;
    /** The version written into snapshot directories. */
    final String version;

    // What changes during a run, each through its own method below (any thread may read it).
    /** The full-screen view, once started; lives across the sessions of --follow. */
    private volatile LiveScreen live;
    /** The session being traced, for the shutdown hook and the live view's quit. */
    private volatile SessionResources current;
    /** q, a signal, or a failure: stop tracing, stop waiting for a process to follow. */
    private volatile boolean stopping;
    /** -d, or what the live view's +/- made it: kept across --follow's sessions. */
    private volatile double intervalSeconds;
    /** Snapshot numbers, run-wide: --follow's sessions never reuse one. */
    final AtomicInteger snapshotNumbers = new AtomicInteger();
    /** The launched command's log, held open (the command appends through /proc/PID/fd/N) until the run ends. */
    private TargetLog targetLog;

    RunControl(TraceOptions options, PrintStream out, PrintStream err, String version) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.version = version;
        this.intervalSeconds = options.delaySeconds();
    }

    /** The live screen, or null while none is up (not the live output, or not started yet). */
    LiveScreen live() {
        return live;
    }

    /** The live screen is up: notices go to its status line from now on. */
    void liveStarted(LiveScreen screen) {
        live = screen;
    }

    /** The session being traced (the last one, after it ended), or null before the first. */
    SessionResources current() {
        return current;
    }

    /** {@code resources} is the session traced from now on. */
    void tracing(SessionResources resources) {
        current = resources;
    }

    /** Whether a stop was asked: q, a signal, a failure. */
    boolean stopping() {
        return stopping;
    }

    double intervalSeconds() {
        return intervalSeconds;
    }

    /** The live view's +/-: the next session starts with it too. */
    void intervalSeconds(double seconds) {
        intervalSeconds = seconds;
    }

    /** Keeps the launched command's log open until {@link #closeTargetLog}. */
    void keepTargetLog(TargetLog log) {
        targetLog = log;
    }

    /** The run is over: the launched command's log is closed. */
    void closeTargetLog() {
        if (targetLog != null) {
            targetLog.close();
        }
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
