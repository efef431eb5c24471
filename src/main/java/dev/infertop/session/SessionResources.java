package dev.infertop.session;

import dev.infertop.agg.Collector;
import dev.infertop.agg.DagRecorder;
import dev.infertop.process.TracedProcess;
import dev.infertop.snapshot.SnapshotTaker;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The clean-up stage: everything one traced session acquired, released in reverse order of acquisition;
 * idempotent and callable from the shutdown hook. The stages hand what they made to it as they go: the target
 * opened, the load stage's owner, then the running parts the hook and the live view's keys reach.
 */
final class SessionResources {
    final TracedProcess process;
    /** The load stage's owner of the BPF object, probes, ring and maps; null until it loaded. */
    private volatile LoadedProbes loaded;
    /** Stopped first: it attaches and detaches the operator layer's per-thread probes on its own thread. */
    volatile OverheadBudget budget;
    volatile Collector collector;
    /** The per-tick policy, for the live view's layer keys; null before the collector and after the session. */
    volatile TickPolicy policy;
    /** The snapshot writer (s, SIGUSR1, --snapshot-every, --snapshot-on-exit). */
    volatile SnapshotTaker snapshots;
    volatile DagRecorder dag;
    volatile boolean stopRequested;
    private boolean closed;
    private final Object detachLock = new Object();
    private final AtomicBoolean detaching = new AtomicBoolean();
    private final CountDownLatch detached = new CountDownLatch(1);

    SessionResources(TracedProcess process) {
        this.process = process;
    }

    /** Takes the load stage's owner: closed with the session, its probes detached first. */
    void adopt(LoadedProbes loaded) {
        this.loaded = loaded;
    }

    void stopCollector() {
        stopRequested = true;
        Collector current = collector;
        if (current != null) {
            current.requestStop();
        }
    }

    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // A launched command's shutdown (llama-server finishing its slots, up to 3 s) and the kernel's uprobe
        // detach (slow per probe) are both slow: let them overlap.
        process.beginStop();
        detach();
        LoadedProbes owned = loaded;
        if (owned != null) {
            owned.close(); // detaches again (idempotent): also what was attached after an early detach from the hook
        }
        process.close();
        StopTimeline.mark("target closed", System.err);
    }

    /** Every probe and perf event off the target (the ring and maps stay: the reader may still drain). */
    private void detach() {
        synchronized (detachLock) {
            OverheadBudget running = budget;
            if (running != null) {
                running.close();
                StopTimeline.mark("budget stopped", System.err);
            }
            LoadedProbes owned = loaded;
            if (owned != null) {
                owned.detach();
            }
            detached.countDown();
        }
    }

    /** Waits until the probes are off; whether they are. */
    boolean awaitDetached(long timeoutMs) {
        try {
            return detached.await(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Detaches from another thread, waiting at most {@code timeoutMs}: a main thread stuck while holding the
     * probe set must not hold the exit too (the kernel drops the rest with infertop's file descriptors).
     */
    void detachWithin(long timeoutMs) {
        detachInBackground();
        awaitDetached(timeoutMs);
    }

    /** Starts detaching on a thread of its own (once); {@link #close} waits for it. */
    void detachInBackground() {
        if (!detaching.compareAndSet(false, true)) {
            return;
        }
        Thread.ofPlatform().name("infertop-detach").daemon().start(this::detach);
    }
}
