package dev.infertop.session;

import dev.infertop.ffi.UserDatabase;
import dev.infertop.io.ConfigFiles;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.metrics.MetricsServer;
import dev.infertop.model.CounterSet;
import dev.infertop.model.CounterSets;
import dev.infertop.model.RunState;
import dev.infertop.snapshot.SnapshotTaker;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A whole run of infertop's tracing command: the options checked, the environment checked, then one
 * {@link TargetSession} per traced process (several with --follow), with one exit path: the shutdown hook
 * (SIGINT, SIGTERM, SIGHUP) and {@link #run}'s finally release what the run holds across sessions.
 */
public final class TraceRun {
    /** How long a quit may take to detach every probe before the shutdown hook detaches them itself. */
    static final long DETACH_WAIT_MS = 1000;

    private final RunControl control;

    /** {@code version} is written into snapshot directories. */
    public TraceRun(TraceOptions options, PrintStream out, PrintStream err, String version) {
        this.control = new RunControl(options, out, err, version);
    }

    /** Traces until the target exits (and --follow finds no other), -n, q or a signal; infertop's exit status. */
    public int run() {
        TraceOptions options = control.options;
        StartTimeline.mark("options parsed", control.err);
        options.validate();
        InvokingUser invoking = InvokingUser.of(System.getenv(), UserDatabase.realUid());
        TargetOpener opener = new TargetOpener(control, invoking);
        CounterSet counterSet = chooseCounterSet(options);
        Preflight.requirePrivileges();
        Path btf = Preflight.requireBtf(options.btf());
        StartTimeline.mark("privileges and kernel BTF checked", control.err);

        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            // SIGINT, SIGTERM, SIGHUP: the probes come off within a second whatever the main thread is doing;
            // a snapshot being written then gets a grace period, and is abandoned cleanly after it.
            control.stop();
            SessionResources resources = control.current();
            if (resources != null && !resources.awaitDetached(DETACH_WAIT_MS)) {
                resources.detachWithin(DETACH_WAIT_MS);
            }
            try {
                if (!finished.await(TargetSession.SNAPSHOT_GRACE_MS + DETACH_WAIT_MS, TimeUnit.MILLISECONDS)) {
                    SnapshotTaker taker = resources == null ? null : resources.snapshots;
                    if (taker != null) {
                        taker.abandon();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            control.closeLive(); // the terminal is restored even if the main thread is stuck
            FatalErrors.printPending(control.err); // an exit for a failure on another thread: its one line
        }, "infertop-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        FatalErrors.defer(true);
        Signals.stopOnSigintEvenWhereIgnored();
        Signals.snapshotOnUsr1(control);
        MetricsServer metrics = null;
        try {
            // a taken port: one line, exit 2, no probe attached
            metrics = ListenOption.start(options.listen(), options.webConfig(), control.err::println);
            if (metrics != null) {
                control.err.println("infertop: serving metrics at " + metrics.url());
            }
            return traceEach(new TargetSession(control, opener, btf, counterSet, metrics),
                    new ProcessFollower(control, invoking));
        } finally {
            control.closeLive();
            StopTimeline.mark("trace ended", control.err);
            FatalErrors.printPending(control.err);
            FatalErrors.defer(false);
            if (metrics != null) {
                metrics.close();
            }
            control.closeTargetLog();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it closes (idempotently) and lets the JVM exit
            }
        }
    }

    /** The process of -p or -- COMMAND, or each process --follow finds, traced in turn. */
    private int traceEach(TargetSession session, ProcessFollower follower) {
        TraceOptions options = control.options;
        Integer pid = options.pid();
        if (pid == null && options.command().isEmpty()) {
            control.err.println("infertop: waiting for a process named " + options.follow());
            pid = follower.waitForProcess(-1);
            if (pid == null) {
                return 130;
            }
        }
        while (true) {
            TargetSession.End end = session.trace(pid);
            control.throwLiveFailure();
            if (end.state() == RunState.EXITED && options.follow() != null && !control.stopping()) {
                control.notice("infertop: pid " + pid + " exited; waiting for a process named " + options.follow());
                LiveScreen view = control.live();
                if (view != null) {
                    view.monitor.following(options.follow());
                }
                Integer next = follower.waitForProcess(pid);
                if (next == null) {
                    control.throwLiveFailure();
                    return 0;
                }
                pid = next;
                continue;
            }
            LiveScreen view = control.live();
            if (view != null && !control.stopping() && end.state() != RunState.STOPPED) {
                view.awaitQuit(); // the target is gone: its last screen stays until q
                control.throwLiveFailure();
            }
            return end.status();
        }
    }

    /** The counters layer's events (read whether or not the layer is on, so a bad --counters fails early). */
    private static CounterSet chooseCounterSet(TraceOptions options) {
        try {
            return ConfigFiles.counterSets().choose(options.counters(), InfertopProbes.architecture());
        } catch (IllegalArgumentException e) {
            throw new UserError((options.counters() == null ? "" : "--counters " + options.counters() + ": ")
                    + e.getMessage(), 2);
        }
    }
}
