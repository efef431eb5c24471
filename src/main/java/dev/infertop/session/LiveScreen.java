package dev.infertop.session;

import dev.infertop.agg.Collector;
import dev.infertop.model.Layer;
import dev.infertop.snapshot.SnapshotTaker;
import dev.infertop.tui.KeyTable;
import dev.infertop.tui.LiveMonitor;
import dev.infertop.tui.LiveView;
import dev.infertop.tui.TerminalSession;
import dev.infertop.view.Theme;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The terminal, the snapshot hand-off and the UI thread of the full-screen view; lives across --follow's sessions. */
final class LiveScreen {
    final TerminalSession terminal;
    final LiveView view;
    final LiveMonitor monitor;
    final KeyTable keys;
    final Thread thread;
    volatile boolean closed;

    /** Lines that came after q (where a snapshot went): printed on stderr once the screen is gone. */
    private final List<String> afterQuit = new ArrayList<>();
    private final PrintStream err;

    /**
     * Shows a message in the status line, or keeps it for stderr when the user is quitting (the screen is
     * about to go); false once the screen is closed (the caller prints it).
     */
    synchronized boolean notice(String text, boolean quitting) {
        if (closed) {
            return false;
        }
        if (quitting) {
            afterQuit.add(text);
        } else {
            monitor.notice(text.startsWith("infertop: ") ? text.substring(10) : text);
        }
        return true;
    }

    private LiveScreen(TerminalSession terminal, LiveView view, LiveMonitor monitor, KeyTable keys,
                        PrintStream err) {
        this.err = err;
        this.terminal = terminal;
        this.view = view;
        this.monitor = monitor;
        this.keys = keys;
        this.thread = Thread.ofPlatform().name("infertop-ui").daemon().unstarted(monitor);
    }

    private static LiveScreen start(LiveMonitor.Controls controls, double refreshSeconds, PrintStream err)
            throws IOException {
        KeyTable keys;
        try {
            keys = KeyTable.load();
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        TerminalSession terminal = TerminalSession.open();
        LiveView view = new LiveView();
        LiveMonitor monitor = new LiveMonitor(terminal, view, keys, Theme.fromEnvironment(System.getenv()),
                controls, refreshSeconds);
        LiveScreen session = new LiveScreen(terminal, view, monitor, keys, err);
        session.thread.start();
        return session;
    }

    void awaitQuit() {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        monitor.requestQuit();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(500); // let it finish a frame before the screen goes away
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        terminal.close();
        afterQuit.forEach(err::println);
        afterQuit.clear();
    }

    /** What the live view's keys do to the run: quit, switch a layer, take a snapshot, write the DAG, set -d. */
    private static LiveMonitor.Controls controls(RunControl control) {
        return new LiveMonitor.Controls() {
            @Override
            public void quit() {
                control.stop();
            }

            @Override
            public void toggle(Layer layer) {
                SessionResources resources = control.current();
                TickPolicy policy = resources == null ? null : resources.policy;
                if (policy != null) {
                    policy.toggles.add(layer);
                }
            }

            @Override
            public void snapshot() {
                control.requestSnapshot(SnapshotTaker.Trigger.KEY);
            }

            @Override
            public String writeDag() {
                SessionResources resources = control.current();
                if (resources == null) {
                    return "no DAG: no target traced";
                }
                return DagExport.write(resources.dag, DagExport.defaultFile(resources.process.pid()),
                        control.options.snapshot().access());
            }

            @Override
            public void setIntervalSeconds(double seconds) {
                control.intervalSeconds(seconds);
                SessionResources resources = control.current();
                Collector collector = resources == null ? null : resources.collector;
                if (collector != null) {
                    collector.setIntervalNs(Math.round(seconds * 1e9));
                }
            }
        };
    }

    /** The run's full screen, started on first use. */
    static LiveScreen of(RunControl control) throws IOException {
        LiveScreen view = control.live();
        if (view == null) {
            view = start(controls(control), control.intervalSeconds(), control.err);
            control.liveStarted(view);
        }
        return view;
    }
}
