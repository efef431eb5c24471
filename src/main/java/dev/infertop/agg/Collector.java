package dev.infertop.agg;

import dev.infertop.model.BudgetStatus;
import dev.infertop.bpf.RecordSource;
import dev.infertop.event.EventDecoder;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.view.SnapshotView;

import java.util.List;

/**
 * The one reader thread: drains the ring buffer on its own clock (probes submit without wake-ups), feeds the
 * aggregator, and every tick freezes a {@link Snapshot} for the view. Stops after {@code maxTicks}, when the
 * target exits, or when {@link #requestStop()} is called (signals); always ends with a final snapshot.
 */
public final class Collector {
    /** How often the loop asks whether the reader of our output is gone (a poll and a flush: cheap, not free). */
    static final long OUTPUT_CHECK_PERIOD_NS = 100_000_000L;

    /**
     * How often the ring buffer is drained between ticks: each drain is a wake-up of infertop on the target's
     * cores (dear on a VM, most of it the wake-up itself), so as rarely as the buffer allows: at
     * most every 500 ms, sooner when at the rate it filled since the last drain it would be an eighth full
     * by then, every 10 ms while it is over a quarter full. With the token and graph layers (a few records per
     * token) that is twice a second instead of ten times (measurements.md, "Earlier figures"). A stop wakes the wait at once ({@link RecordSource#wakeUp}).
     */
    private static final int QUIET_DRAIN_PERIOD_MS = 500;
    private static final int BUSY_DRAIN_PERIOD_MS = 10;

    /** Per-tick hooks into the rest of the session (library rescans, target identity, layer states). */
    public interface Session {
        /** Called before each snapshot; {@code previous} is the last one shown (null before the first). */
        void onTick(Snapshot previous);

        /** Called with the run's final snapshot, before it is shown: what happened after the last tick. */
        default void onFinal(Snapshot last) {}

        /** While true (e.g. the target's model not seen yet), drain and call {@link #onDrain} every 10 ms. */
        boolean startingUp();

        /** Called after each drain (every few ms) with the records it handled: upkeep that cannot wait. */
        void onDrain(long nowNs, int records);

        TargetInfo target();

        List<LayerStatus> layers();

        /** The overhead budget's status, for the header; NONE where no budget runs. */
        default BudgetStatus budget() {
            return BudgetStatus.NONE;
        }

        boolean targetAlive();
    }

    private final RecordSource ring;
    private final EventDecoder decoder;
    private final TraceAggregator aggregator;
    /** Records the probes could not submit (ring full), summed over CPUs. */
    private final java.util.function.LongSupplier lostEvents;
    private final SnapshotView view;
    private final Session session;
    private volatile boolean stopRequested;
    private volatile long requestedIntervalNs;

    public Collector(RecordSource ring, TraceAggregator aggregator, EventDecoder decoder,
                     java.util.function.LongSupplier lostEvents,
                     SnapshotView view, Session session) {
        this.ring = ring;
        this.aggregator = aggregator;
        this.decoder = decoder;
        this.lostEvents = lostEvents;
        this.view = view;
        this.session = session;
    }

    public void requestStop() {
        stopRequested = true;
        ring.wakeUp();
    }

    /** A new time between snapshots, applied from the next tick on (the live view's +/- keys). */
    public void setIntervalNs(long intervalNs) {
        requestedIntervalNs = intervalNs;
    }

    public boolean stopRequested() {
        return stopRequested;
    }

    /**
     * Runs until stopped.
     *
     * @param intervalNs time between snapshots
     * @param maxTicks   stop after this many interval snapshots (0 = no limit)
     * @return why it stopped: {@link RunState#EXITED}, {@link RunState#STOPPED} or {@link RunState#DONE}
     */
    public RunState run(long intervalNs, long maxTicks) {
        long start = System.nanoTime();
        aggregator.start(start);
        long nextTick = start + intervalNs;
        long ticks = 0;
        RunState state = RunState.RUNNING;
        Snapshot last = null;
        long lastDrainNs = start;
        long lastOutputCheckNs = start;
        while (true) {
            long backlogBytes = ring.backlogBytes();
            long drainNs = System.nanoTime();
            int records = ring.drain(decoder);
            if (stopRequested) {
                state = RunState.STOPPED;
                break;
            }
            if (!session.targetAlive()) {
                state = RunState.EXITED;
                break;
            }
            long now = System.nanoTime();
            if (now - lastOutputCheckNs >= OUTPUT_CHECK_PERIOD_NS) {
                lastOutputCheckNs = now;
                if (view.outputClosed()) {
                    state = RunState.STOPPED; // the reader of our output is gone (a pipe into head): nobody watches
                    break;
                }
            }
            session.onDrain(now, records);
            if (now >= nextTick) {
                session.onTick(last);
                ticks++;
                last = snapshot(now, RunState.RUNNING);
                view.show(last);
                if (view.outputClosed()) {
                    state = RunState.STOPPED; // the reader of our output is gone (EPIPE): nobody is watching
                    break;
                }
                long requested = requestedIntervalNs;
                if (requested > 0) {
                    intervalNs = requested;
                }
                nextTick += intervalNs;
                if (nextTick < now) {
                    nextTick = now + intervalNs; // we fell behind (machine stalled): do not burst
                }
                if (maxTicks > 0 && ticks >= maxTicks) {
                    state = RunState.DONE;
                    break;
                }
            }
            int period = ring.backlogBytes() > ring.capacityBytes() / 4 || session.startingUp()
                    || aggregator.wantsPromptDrain() ? BUSY_DRAIN_PERIOD_MS
                    : drainPeriodMs(backlogBytes, drainNs - lastDrainNs, ring.capacityBytes());
            lastDrainNs = drainNs;
            long waitMs = Math.max(1, Math.min(period, (nextTick - System.nanoTime()) / 1_000_000));
            ring.await((int) waitMs);
        }
        ring.drain(decoder);
        session.onTick(last);
        Snapshot finalSnapshot = snapshot(System.nanoTime(), state);
        session.onFinal(finalSnapshot);
        view.show(finalSnapshot);
        return state;
    }

    /**
     * The wait before the next drain: {@link #QUIET_DRAIN_PERIOD_MS}, or less when {@code filledBytes} written
     * over the last {@code overNs} would at that rate fill an eighth of the ring in less.
     */
    static int drainPeriodMs(long filledBytes, long overNs, long capacityBytes) {
        if (filledBytes <= 0 || overNs <= 0) {
            return QUIET_DRAIN_PERIOD_MS;
        }
        double msToAnEighth = (capacityBytes / 8.0) / filledBytes * (overNs / 1e6);
        return (int) Math.max(BUSY_DRAIN_PERIOD_MS, Math.min(QUIET_DRAIN_PERIOD_MS, msToAnEighth));
    }

    private Snapshot snapshot(long now, RunState state) {
        return aggregator.snapshot(now, state, session.target(), lostEvents.getAsLong() + decoder.malformedRecords(),
                session.layers()).withBudget(session.budget());
    }
}
