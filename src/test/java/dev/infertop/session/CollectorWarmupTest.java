package dev.infertop.session;

import dev.infertop.io.ConfigFiles;
import dev.infertop.model.LayerStatus;
import dev.infertop.agg.Collector;
import dev.infertop.bpf.RecordSource;
import dev.infertop.event.RecordHandler;
import dev.infertop.model.BackendNames;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.process.layout.CalibratedLayout;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up drives the collector's own loop: every tick it was asked for reaches the view, and every
 * synthetic call it hands over after a drain is decoded, aggregated and attributed, as real records would be.
 */
class CollectorWarmupTest {
    /** The ring of a target that is held at its gate: nothing to drain; waiting takes the time asked. */
    private static class EmptyRing implements RecordSource {
        @Override
        public int drain(RecordHandler handler) {
            return 0;
        }

        @Override
        public long backlogBytes() {
            return 0;
        }

        @Override
        public long capacityBytes() {
            return 1 << 20;
        }

        @Override
        public void await(int timeoutMs) {
            try {
                Thread.sleep(timeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final RecordSource EMPTY_RING = new EmptyRing();

    @Test
    void everyTickReachesTheViewAndEveryCallHandedOverIsCounted() {
        CalibratedLayout layout = SyntheticDecodeStreamTest.layout(SyntheticDecodeStreamTest.OPS);
        BackendNames backends = ConfigFiles.backendNames();
        Pipeline pipeline = Pipeline.build(layout, backends, 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        List<Snapshot> shown = new ArrayList<>();
        long calls;
        try (SyntheticDecodeStream stream = new SyntheticDecodeStream(pipeline.decoder(), layout,
                backends.guidOf("CPU"), System.nanoTime())) {
            CollectorWarmup warmup = new CollectorWarmup(stream, new TargetInfo(1, "held", null, List.of()), List.of());
            RunState state = new Collector(EMPTY_RING, pipeline.aggregator(), pipeline.decoder(), () -> 0, shown::add,
                    warmup).run(CollectorWarmup.TICK_NS, CollectorWarmup.TICKS);
            assertEquals(RunState.DONE, state);
            calls = stream.calls();
        }
        assertEquals(CollectorWarmup.TICKS + 1, shown.size(), "every tick, then the final snapshot");
        Snapshot last = shown.getLast();
        assertTrue(last.isFinal());
        assertTrue(calls > CollectorWarmup.TICKS, "calls handed over after each drain: " + calls);
        assertEquals(calls, last.total().tokens().decodeCalls(), "every call decoded and counted");
        assertEquals(calls, last.total().operators().graphsAttributed(), "the final snapshot finishes the last graph");
        assertEquals(0, last.total().operators().graphsUnattributed());
        assertEquals(0, pipeline.decoder().malformedRecords());
    }

    /**
     * The collector sleeps up to half a second between drains; a stop must not wait for that. This ring's
     * wait ends only when woken (or after 10 s), so the run returns promptly only if a stop wakes it.
     */
    @Test
    void aStopWakesTheCollectorsWait() throws Exception {
        java.util.concurrent.CountDownLatch woken = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger waits = new java.util.concurrent.atomic.AtomicInteger();
        RecordSource ring = new EmptyRing() {
            @Override
            public void await(int timeoutMs) {
                waits.incrementAndGet();
                try {
                    woken.await(10, java.util.concurrent.TimeUnit.SECONDS); // not the timeout: only a wake-up
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void wakeUp() {
                woken.countDown();
            }
        };
        Collector.Session session = session(true, last -> {});
        Pipeline pipeline = Pipeline.build(null, ConfigFiles.backendNames(), 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        List<Snapshot> shown = new java.util.concurrent.CopyOnWriteArrayList<>();
        Collector collector = new Collector(ring, pipeline.aggregator(), pipeline.decoder(), () -> 0, shown::add,
                session);
        java.util.concurrent.CompletableFuture<RunState> run =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> collector.run(60_000_000_000L, 0));
        while (waits.get() == 0) {
            Thread.sleep(5); // the collector is waiting now
        }
        long stopNs = System.nanoTime();
        collector.requestStop();
        assertEquals(RunState.STOPPED, run.get(10, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - stopNs < 2_000_000_000L, "stopped within 2 s, not at the wait's end");
        assertTrue(shown.getLast().isFinal());
    }

    /** The session sees the final snapshot before it is shown: records lost after the last tick are said too. */
    @Test
    void theSessionSeesTheFinalSnapshotBeforeItIsShown() throws Exception {
        List<Snapshot> shown = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Snapshot> finals = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger shownWhenFinal = new java.util.concurrent.atomic.AtomicInteger(-1);
        Collector.Session session = session(false, last -> {
            finals.add(last);
            shownWhenFinal.set(shown.size());
        });
        Pipeline pipeline = Pipeline.build(null, ConfigFiles.backendNames(), 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        Collector collector = new Collector(new EmptyRing(), pipeline.aggregator(), pipeline.decoder(), () -> 7,
                shown::add, session);
        assertEquals(RunState.EXITED, collector.run(60_000_000_000L, 0));
        assertEquals(1, finals.size(), "once");
        assertTrue(finals.getFirst().isFinal());
        assertEquals(7, finals.getFirst().lostEvents(), "the run's lost records, counted after the last tick");
        assertEquals(0, shownWhenFinal.get(), "before the final snapshot is shown");
        assertTrue(shown.getLast() == finals.getFirst(), "the same snapshot is shown");
    }

    /** A session with a target that is alive (or gone) throughout; {@code onFinal} sees the final snapshot. */
    private static Collector.Session session(boolean alive, java.util.function.Consumer<Snapshot> onFinal) {
        return new Collector.Session() {
            public void onTick(Snapshot previous) {}
            public void onFinal(Snapshot last) { onFinal.accept(last); }
            public boolean startingUp() { return false; }
            public void onDrain(long nowNs, int records) {}
            public TargetInfo target() { return new TargetInfo(1, alive ? "idle" : "gone", null, List.of()); }
            public List<LayerStatus> layers() { return List.of(); }
            public boolean targetAlive() { return alive; }
        };
    }
}
