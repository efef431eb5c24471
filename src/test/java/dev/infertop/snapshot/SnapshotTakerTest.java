package dev.infertop.snapshot;

import dev.infertop.history.FlightRecorder;
import dev.infertop.io.ConfigFiles;
import dev.infertop.model.Figures;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.Other;
import dev.infertop.model.ThreadTotals;
import dev.infertop.agg.Routers;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.event.NameTable;
import dev.infertop.model.BackendNames;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the taker writes: on request (key, SIGUSR1) at the next tick, on its timer, at exit, else never. */
class SnapshotTakerTest {
    @TempDir
    Path temp;

    private final List<String> notices = new CopyOnWriteArrayList<>();
    private final List<Snapshot> shown = new CopyOnWriteArrayList<>();
    private final TraceAggregator aggregator = Routers.of(ConfigFiles.backendNames(), null);

    private SnapshotTaker taker(double everySeconds, boolean onExit) {
        return new SnapshotTaker(shown::add, aggregator, new NameTable(),
                new SnapshotOptions(temp.resolve("s%n").toString(), everySeconds, onExit, 1), notices::add,
                new AtomicInteger(), "test");
    }

    private Snapshot tick(boolean isFinal) {
        return aggregator.snapshot(System.nanoTime(), isFinal ? RunState.EXITED : RunState.RUNNING, SnapshotFixtures.target(), 0,
                SnapshotFixtures.layers());
    }

    @Test
    void aThreadPerRequestDoesNotGrowTheThreadNamesKept() {
        SnapshotTaker taker = taker(0, false);
        aggregator.start(System.nanoTime());
        Snapshot base = tick(false);
        for (int t = 0; t < 1000; t++) { // each tick lists three new threads (the collector folded the old ones)
            List<ThreadTotals> threads = List.of(
                    new ThreadTotals(1_000_000 + 3 * t, 1, 1, 1, 0, 0),
                    new ThreadTotals(1_000_001 + 3 * t, 1, 1, 1, 0, 0),
                    new ThreadTotals(Other.TID, 3L * t, 1, 1, -1, 0));
            OperatorTotals operators = new OperatorTotals(List.of(), threads, t, 0);
            taker.show(base.withFigures(f -> f.withOperatorFiguresOf(new Figures(0,
                    f.tokens(), f.ttft(), f.tpot(), List.of(), f.cpuGraphs(), operators, f.sched(), f.counters(),
                    List.of()))));
            assertTrue(taker.threadsRemembered() <= 2, t + ": " + taker.threadsRemembered());
        }
    }

    @Test
    void aRequestIsWrittenAtTheNextTickByTheWriterThread() throws Exception {
        SnapshotTaker taker = taker(0, false);
        aggregator.start(System.nanoTime());
        taker.show(tick(false));
        assertEquals(List.of(), notices, "nothing asked, nothing written");
        taker.request(SnapshotTaker.Trigger.SIGUSR1);
        taker.show(tick(false));
        taker.show(tick(true));
        assertTrue(taker.finish(10_000), "the write in flight finishes");
        assertEquals(List.of("infertop: writing snapshot (SIGUSR1)…",
                "infertop: snapshot (SIGUSR1) written to " + temp.resolve("s1")), notices);
        assertEquals(0, taker.pendingWrites());
        assertTrue(Files.isRegularFile(temp.resolve("s1/summary.json")));
        assertEquals(3, shown.size(), "every tick still reached the view");
    }

    @Test
    void theTimerWritesEveryPeriodAndExitWritesTheLast() throws Exception {
        SnapshotTaker taker = taker(0.1, true);
        aggregator.start(System.nanoTime());
        taker.show(tick(false)); // too early
        Thread.sleep(150);
        taker.show(tick(false));
        taker.show(tick(true)); // queued like the others: the session detaches its probes, then finishes
        assertTrue(taker.finish(10_000));
        // On a loaded machine the period may also have passed again by the exit tick: then that one says both.
        List<String> writing = notices.stream().filter(n -> n.contains("writing")).toList();
        String exit = writing.size() == 2 && writing.get(1).contains("every 0.1 s, exit") ? "every 0.1 s, exit" : "exit";
        assertEquals(List.of("infertop: writing snapshot (every 0.1 s)…", "infertop: writing snapshot (" + exit + ")…"),
                writing);
        assertEquals(List.of("infertop: snapshot (every 0.1 s) written to " + temp.resolve("s1"),
                "infertop: snapshot (" + exit + ") written to " + temp.resolve("s2")),
                notices.stream().filter(n -> n.contains("written to")).toList(), "written in the order taken");
        assertEquals(temp.resolve("s2"), taker.lastWritten());
    }

    @Test
    void requestsWhileOneIsBeingWrittenAreDroppedWithANoticeAndNothingPilesUp() throws Exception {
        // The writer thread is held inside its own outcome notice (a stalled disk, a FIFO, as far as the taker
        // can tell): nothing else of the write is faked.
        java.util.concurrent.CountDownLatch writerHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.function.Consumer<String> holding = notice -> {
            notices.add(notice);
            if (Thread.currentThread().getName().equals("infertop-snapshot")) {
                writerHeld.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        SnapshotTaker taker = new SnapshotTaker(shown::add, aggregator, new NameTable(),
                new SnapshotOptions(temp.resolve("s%n").toString(), 0, true, 1), holding, new AtomicInteger(), "test");
        aggregator.start(System.nanoTime());
        taker.show(tick(false));
        taker.request(SnapshotTaker.Trigger.KEY);
        taker.show(tick(false));
        assertTrue(writerHeld.await(60, java.util.concurrent.TimeUnit.SECONDS), "the first write reached its notice");
        int requests = 2000;
        for (int i = 0; i < requests; i++) {
            taker.request(SnapshotTaker.Trigger.KEY);
            taker.show(tick(false));
        }
        assertEquals(1, taker.pendingWrites(), "only the write in flight is held");
        assertEquals(requests, notices.stream()
                .filter("infertop: snapshot (key) dropped: the one before is still being written"::equals).count());
        taker.show(tick(true)); // the final one still waits its turn
        assertEquals(2, taker.pendingWrites());
        release.countDown();
        assertTrue(taker.finish(60_000));
        assertEquals(List.of("s1", "s2"), Files.list(temp).map(p -> p.getFileName().toString()).sorted().toList());
        assertEquals(3 + requests, shown.size(), "every tick still reached the view");
    }

    @Test
    void abandoningWithNothingInFlightSaysNothing() {
        SnapshotTaker taker = taker(0, false);
        aggregator.start(System.nanoTime());
        taker.show(tick(false));
        taker.abandon();
        assertEquals(List.of(), notices);
    }

    @Test
    void threadsAreNamedByTheirComm() throws Exception {
        int pid = (int) ProcessHandle.current().pid();
        var recorder = new FlightRecorder(8, 1_000_000_000L);
        recorder.record(FlightRecorder.Kind.OP, pid, 0, 10, recorder.label("ADD"), -1, 1);
        recorder.record(FlightRecorder.Kind.OP, Integer.MAX_VALUE, 0, 10, 0, -1, 1); // no such thread
        String comm = Files.readString(Path.of("/proc/self/task/" + pid + "/comm")).strip();
        assertEquals(java.util.Map.of(pid, comm), SnapshotTaker.threadNames(pid, recorder.copyWindow(20)));
    }

    @Test
    void badOptionsAreOneLine() {
        assertEquals("--snapshot-dir: unknown %x in snapshot path pattern 'a-%x' (use %p pid, %t time, %n number, "
                + "%% percent)", new SnapshotOptions("a-%x", 0, false, 10).problem());
        assertEquals("--snapshot-every must be between 0.1 and 86400 seconds, got -1.0",
                new SnapshotOptions("a", -1, false, 10).problem());
        assertEquals("--flight-seconds must be between 0 (no timeline) and 3600, got 4000.0",
                new SnapshotOptions("a", 0, false, 4000).problem());
        assertEquals(null, SnapshotOptions.DEFAULTS.problem());
    }
}
