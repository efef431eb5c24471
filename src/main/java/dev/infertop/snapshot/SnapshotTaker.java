package dev.infertop.snapshot;

import dev.infertop.agg.DagRecorder;
import dev.infertop.export.OperatorDag;
import dev.infertop.model.Other;
import dev.infertop.model.SafeText;
import dev.infertop.model.ThreadTotals;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.event.NameTable;
import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.export.SnapshotWriteException;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.SnapshotView;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Sits between the collector and the view: passes every snapshot on, and when a snapshot is due (the live
 * view's key, SIGUSR1, the timer, the end of tracing) copies what the directory needs on the collector thread
 * (the recorder and histograms have a single writer) and hands the copy to a writer thread, so a slow disk
 * never stalls the ring buffer's reader. The final snapshot is queued like the others: the session detaches its
 * probes and then {@link #finish}es the writes (or, when it must exit at once, {@link #abandon}s them).
 * Outcomes, good or bad, are one line to {@code notices}; a failed write never stops tracing. While one is
 * queued or being written, a further request is dropped with a notice (only the final one may wait behind it).
 */
public final class SnapshotTaker implements SnapshotView {
    /** Ticks kept for the report's op time per token across the run (one hour at the default 1 s). */
    static final int MAX_TICKS = 3600;

    private final SnapshotView delegate;
    private final FlightRecorder flight;
    private final IntervalHistograms histograms;
    private final NameTable names;
    private final SnapshotOptions options;
    private final Consumer<String> notices;
    private final AtomicInteger numbers;
    private final String version;
    private final AtomicReference<Trigger> requested = new AtomicReference<>();
    private final ArrayDeque<SnapshotContent.TickSample> ticks = new ArrayDeque<>();
    private final ExecutorService writer = Executors.newSingleThreadExecutor(runnable ->
            Thread.ofPlatform().name("infertop-snapshot").daemon().unstarted(runnable));
    private long lastTimedNs = System.nanoTime();
    private volatile Path lastWritten;
    /** The directory the writer thread is writing now, or null; queued and running writes. */
    private volatile Path writing;
    private final AtomicInteger pending = new AtomicInteger();
    private volatile boolean abandoned;

    /** For the operator DAG of the last decode graph, read on the collector thread at capture. */
    private final TraceAggregator aggregator;

    /** {@code numbers}: snapshot numbers (%n), shared across the sessions of one infertop run. */
    public SnapshotTaker(SnapshotView delegate, TraceAggregator aggregator, NameTable names, SnapshotOptions options,
                         Consumer<String> notices, AtomicInteger numbers, String version) {
        this.delegate = delegate;
        this.names = names;
        this.options = options;
        this.notices = notices;
        this.numbers = numbers;
        this.version = version;
        this.aggregator = aggregator;
        this.flight = options.flightSeconds() > 0
                ? new FlightRecorder(FlightRecorder.DEFAULT_CAPACITY, Math.round(options.flightSeconds() * 1e9))
                : null;
        this.histograms = new IntervalHistograms(IntervalHistograms.DEFAULT_MAX_INTERVALS);
        aggregator.keepForSnapshots(flight, histograms);
    }

    @Override
    public boolean outputClosed() {
        return delegate.outputClosed();
    }

    /** What asks for a snapshot from outside the tick: the live view's key or SIGUSR1. */
    public enum Trigger {
        KEY("key"),
        SIGUSR1("SIGUSR1");

        private final String label;

        Trigger(String label) {
            this.label = label;
        }

        /** As the snapshot's summary and notices name it. */
        public String label() {
            return label;
        }
    }

    /** Asks for a snapshot at the next tick; any thread (key handler, signal handler). */
    public void request(Trigger trigger) {
        requested.set(trigger);
    }

    /** The directory written last, or null. */
    public Path lastWritten() {
        return lastWritten;
    }

    @Override
    public void show(Snapshot snapshot) {
        delegate.show(snapshot);
        if (ticks.size() == MAX_TICKS) {
            ticks.removeFirst();
        }
        nameNewThreads(snapshot);
        ticks.addLast(sample(snapshot));
        long now = System.nanoTime();
        Trigger asked = requested.getAndSet(null);
        String trigger = asked == null ? null : asked.label();
        if (asked == null && options.everySeconds() > 0 && now - lastTimedNs >= options.everySeconds() * 1e9) {
            trigger = "every " + options.everySeconds() + " s";
            lastTimedNs = now;
        }
        if (snapshot.isFinal() && options.onExit()) {
            trigger = trigger == null ? "exit" : trigger + ", exit";
        }
        if (trigger == null) {
            return;
        }
        // One snapshot in flight at most (the final one may queue behind it: a session takes one): a disk
        // that stalls, or a directory that cannot be written, never piles up copies of the flight recorder.
        if (pending.get() > 0 && !snapshot.isFinal()) {
            notices.accept("infertop: snapshot (" + trigger + ") dropped: the one before is still being written");
            return;
        }
        SnapshotContent content = capture(snapshot, trigger, now);
        Path target = SnapshotDirectoryWriter.expand(options.pathPattern(), snapshot.target().pid(),
                LocalDateTime.now(), numbers.incrementAndGet());
        // Written on the writer thread even at the end: the session detaches its probes first and then waits
        // for the write (finish), so a slow disk never holds probes attached or the reader behind.
        notices.accept("infertop: writing snapshot (" + trigger + ")…");
        pending.incrementAndGet();
        writer.execute(() -> write(target, content));
    }

    private void write(Path target, SnapshotContent content) {
        writing = target;
        try {
            if (abandoned) {
                return;
            }
            SnapshotDirectoryWriter.Written written = SnapshotDirectoryWriter.writeDirectory(target, content,
                    options.access());
            lastWritten = written.directory();
            StringBuilder line = new StringBuilder("infertop: snapshot (" + content.trigger() + ") written to "
                    + written.directory());
            for (SnapshotDirectoryWriter.LeftOut file : written.leftOut()) {
                if (file.failed()) {
                    line.append("; ").append(file.file()).append(" left out: ").append(file.why());
                }
            }
            notices.accept(line.toString());
        } catch (SnapshotWriteException e) {
            if (!abandoned) {
                notices.accept("infertop: " + e.getMessage());
            }
        } catch (RuntimeException e) {
            notices.accept("infertop: snapshot failed: " + e);
        } finally {
            writing = null;
            pending.decrementAndGet();
        }
    }

    /** Snapshots queued or being written. */
    public int pendingWrites() {
        return pending.get();
    }

    /**
     * Lets the writes already queued finish (the end of tracing: probes are detached by then) within
     * {@code timeoutMs}; whether they all did. No snapshot is taken after this.
     */
    public boolean finish(long timeoutMs) {
        writer.shutdown();
        try {
            return writer.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Gives up the writes still in flight (infertop must exit now): the one being written loses its hidden
     * temporary directory, none under the snapshot's name is left half-written. One line says which.
     */
    public void abandon() {
        abandoned = true;
        writer.shutdownNow();
        Path target = writing;
        int left = pending.get();
        if (target == null && left == 0) {
            return;
        }
        if (target != null) {
            SnapshotDirectoryWriter.deleteTemporaries(target);
        }
        notices.accept("infertop: snapshot " + (target != null ? "to " + target + " " : "")
                + "abandoned: infertop is quitting" + (left > 1 ? " (" + left + " snapshots not written)" : ""));
    }

    /** What the directory needs, copied now: the recorder and histograms keep changing after this. */
    SnapshotContent capture(Snapshot snapshot, String trigger, long nowNs) {
        FlightRecorder.Window window = flight == null
                ? FlightRecorder.Window.empty(nowNs, 0)
                : flight.copyWindow(nowNs);
        Map<Integer, String> tensorNames = new HashMap<>();
        for (FlightRecorder.Slice slice : window.slices()) {
            if ((slice.kind() == FlightRecorder.Kind.OP || slice.kind() == FlightRecorder.Kind.WAIT)
                    && slice.detail() >= 0 && !tensorNames.containsKey(slice.detail())) {
                tensorNames.put(slice.detail(), names.name(slice.detail()));
            }
        }
        Map<Integer, String> threadNames = new HashMap<>(knownThreadNames);
        threadNames.putAll(threadNames(snapshot.target().pid(), window));
        DagRecorder dagRecorder = aggregator.registered(DagRecorder.class);
        OperatorDag dag = dagRecorder == null ? null
                : OperatorDag.ofGraph(dagRecorder.lastDecodeGraph()).orElse(null);
        return new SnapshotContent(snapshot, window, tensorNames, histograms.copy(), List.copyOf(ticks), trigger,
                System.currentTimeMillis(), version, threadNames, dag);
    }

    /** Threads whose name was read or tried, now (tests: bounded by the threads a snapshot lists). */
    int threadsRemembered() {
        return namingTried.size();
    }

    /** Thread names read while the threads live: a snapshot at exit still names them. */
    private final Map<Integer, String> knownThreadNames = new HashMap<>();
    private final java.util.Set<Integer> namingTried = new java.util.HashSet<>();

    /**
     * Reads the comm of threads seen for the first time (once each: a few small /proc files per run), and
     * forgets the threads no longer listed (the collector folded them into "other"): a target that starts a
     * thread per request would otherwise grow these without bound.
     */
    private void nameNewThreads(Snapshot snapshot) {
        java.util.List<ThreadTotals> listed = snapshot.total().operators().threads();
        if (!namingTried.isEmpty()) { // once a tick, at most 257 rows
            java.util.Set<Integer> tids = new java.util.HashSet<>();
            listed.forEach(thread -> tids.add(thread.tid()));
            namingTried.retainAll(tids);
            knownThreadNames.keySet().retainAll(tids);
        }
        for (ThreadTotals thread : listed) {
            if (thread.tid() != Other.TID && namingTried.add(thread.tid())) {
                String name = comm(snapshot.target().pid(), thread.tid());
                if (name != null) {
                    knownThreadNames.put(thread.tid(), name);
                }
            }
        }
    }

    private static String comm(int pid, int tid) {
        try {
            return SafeText.of(java.nio.file.Files.readString(
                    Path.of("/proc", Integer.toString(pid), "task", Integer.toString(tid), "comm")).strip());
        } catch (java.io.IOException | RuntimeException gone) {
            return null;
        }
    }

    /** The comm of each thread in the window, read from /proc while the target lives (a few small files). */
    static Map<Integer, String> threadNames(int pid, FlightRecorder.Window window) {
        Map<Integer, String> names = new HashMap<>();
        for (FlightRecorder.Slice slice : window.slices()) {
            if (slice.kind() == FlightRecorder.Kind.COUNTER || names.containsKey(slice.tid())) {
                continue;
            }
            names.put(slice.tid(), comm(pid, slice.tid()));
        }
        names.values().removeIf(java.util.Objects::isNull);
        return names;
    }

    static SnapshotContent.TickSample sample(Snapshot s) {
        Map<String, Long> opWall = new LinkedHashMap<>();
        for (OpTotals op : s.interval().operators().ops()) {
            opWall.put(op.op(), op.wallNs());
        }
        return new SnapshotContent.TickSample(s.total().spanNs() / 1e9,
                s.interval().tokens().tokensPrefill() + s.interval().tokens().tokensDecode(),
                s.interval().tokens().decodeTokensPerSecond(), opWall);
    }
}
