package dev.infertop.session;

import dev.infertop.agg.Collector;
import dev.infertop.agg.DagRecorder;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.PerCpuCounter;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.process.TracedProcess;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The clean-up stage: everything one traced session acquired, released in reverse order of acquisition;
 * idempotent and callable from the shutdown hook.
 */
final class SessionResources {
    final TracedProcess process;
    BpfObject object;
    ProbeSet probes;
    RingBufferReader ring;
    PerCpuCounter lost;
    PerCpuCounter schedHits;
    dev.infertop.bpf.GraphStartMaps graphStarts;
    /** Stopped first: it attaches and detaches the operator layer's per-thread probes on its own thread. */
    volatile OverheadBudget budget;
    volatile Collector collector;
    volatile DagRecorder dag;
    volatile boolean stopRequested;
    private boolean closed;
    private final Object detachLock = new Object();
    private final AtomicBoolean detaching = new AtomicBoolean();
    private final CountDownLatch detached = new CountDownLatch(1);

    SessionResources(TracedProcess process) {
        this.process = process;
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
        if (probes != null) {
            probes.close(); // idempotent: also what was attached after an early detach from the hook
        }
        if (ring != null) {
            ring.close();
        }
        if (lost != null) {
            lost.close();
        }
        if (schedHits != null) {
            schedHits.close();
        }
        if (graphStarts != null) {
            graphStarts.close();
        }
        if (object != null) {
            object.close();
        }
        process.close();
    }

    /** Every probe and perf event off the target (the ring and maps stay: the reader may still drain). */
    private void detach() {
        synchronized (detachLock) {
            OverheadBudget running = budget;
            if (running != null) {
                running.close();
            }
            if (probes != null) {
                probes.close();
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
