package dev.infertop.tui;

import dev.infertop.view.SampledWindowHold;
import dev.infertop.model.Snapshot;
import dev.infertop.view.SnapshotView;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Hands snapshots from the collector thread to the UI thread: the latest one wins (a slow UI skips frames, it
 * never slows the collector), and the UI is woken at once instead of at its next poll.
 */
public final class LiveView implements SnapshotView {
    private final AtomicReference<Snapshot> latest = new AtomicReference<>();
    private final SampledWindowHold hold = new SampledWindowHold();
    private final Object wakeup = new Object();
    private boolean woken;

    @Override
    public void show(Snapshot snapshot) {
        latest.set(hold.apply(snapshot));
        wake();
    }

    public Snapshot latest() {
        return latest.get();
    }

    public void wake() {
        synchronized (wakeup) {
            woken = true;
            wakeup.notifyAll();
        }
    }

    /** Waits until woken or {@code timeoutMs} passed. */
    public void await(long timeoutMs) throws InterruptedException {
        synchronized (wakeup) {
            if (!woken) {
                wakeup.wait(Math.max(1, timeoutMs));
            }
            woken = false;
        }
    }
}
