package dev.infertop.session;

import dev.infertop.agg.Collector;
import dev.infertop.bpf.PerCpuCounter;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.model.BackendNames;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.snapshot.SnapshotOptions;
import dev.infertop.snapshot.SnapshotTaker;
import dev.infertop.tui.OffscreenView;
import dev.infertop.view.BatchTextView;
import dev.infertop.json.JsonLinesView;
import dev.infertop.view.SnapshotView;
import dev.infertop.view.Theme;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs the collector loop itself (ring drains and waits, decoder, aggregators, snapshots, the view) over a
 * {@link SyntheticDecodeStream} while the launched target is still held at its gate, on a throw-away pipeline
 * built like the real one, so the JIT compiles that code before the target runs instead of while it does.
 * Without this, infertop's first seconds of tracing (interpreted code, C1 compiling the per-event and
 * per-tick paths) cost the target most of infertop's whole cost under the token and graph layers
 * (measurements.md, "Earlier figures").
 * <p>
 * It is the collector's {@link Collector.Session}: each drain of the real (still empty) ring is followed by
 * a few synthetic calls handed to the decoder, and ticks come every {@link #TICK_NS}, so per-tick code runs
 * ~{@link #TICKS} times: past C1's threshold of ~200 calls (at one tick a second it would otherwise run
 * interpreted for minutes and be compiled a method at a time while the target runs).
 */
final class CollectorWarmup implements Collector.Session {
    static final int TICKS = 224;
    static final long TICK_NS = 2_000_000L;
    /** Calls per drain: the first ticks see a dozen, like a 70 tokens/s decode; later ones a few. */
    private static final int BUSY_CALLS_PER_DRAIN = 6;
    private static final int BUSY_DRAINS = 50;

    private final SyntheticDecodeStream stream;
    private final TargetInfo target;
    private final List<LayerStatus> layers;
    private int drains;

    /**
     * Runs a throw-away pipeline over the synthetic stream while the launched target is still held, so the JIT
     * compiles the collector's code now and not while the target runs. {@code ring} and {@code lost} are the
     * session's (still empty) ring and lost-records counter; only a speed-up, so a failure is one notice.
     */
    static void run(RunControl control, Calibration calibration, BackendNames backendNames, TickPolicy policy,
                    RingBufferReader ring, PerCpuCounter lost) {
        TraceOptions options = control.options;
        Pipeline pipeline = Pipeline.build(calibration.layout(), backendNames, 0, () -> 0,
                (signature, groups, idsTensors, layers) -> false, address -> "");
        SnapshotView sink = switch (options.output()) {
            case JSON -> new JsonLinesView(new PrintStream(OutputStream.nullOutputStream()));
            case BATCH -> new BatchTextView(new PrintStream(OutputStream.nullOutputStream()));
            case QUIET -> (SnapshotView) snapshot -> { };
            case LIVE -> OffscreenView.open(control.live().keys, Theme.fromEnvironment(System.getenv()));
        };
        SnapshotOptions keepOnly = new SnapshotOptions(options.snapshot().pathPattern(), 0, false,
                options.snapshot().flightSeconds());
        SnapshotTaker taker = new SnapshotTaker(sink, pipeline.aggregator(), pipeline.names(), keepOnly, text -> {},
                new AtomicInteger(), "warm-up");
        try (SyntheticDecodeStream stream = new SyntheticDecodeStream(pipeline.decoder(), calibration.layout(),
                backendNames.guidOf("CPU"), System.nanoTime())) {
            CollectorWarmup warmup = new CollectorWarmup(stream, policy.target(), policy.layers());
            new Collector(ring, pipeline.aggregator(), pipeline.decoder(), lost::sum, taker, warmup)
                    .run(TICK_NS, TICKS);
            awaitJitIdle();
        } catch (RuntimeException e) {
            // Only a speed-up: tracing works without it. Say so, since it means the stream no longer matches.
            control.notice("infertop: warm-up skipped (" + e + ")");
        } finally {
            sink.close();
        }
    }

    CollectorWarmup(SyntheticDecodeStream stream, TargetInfo target, List<LayerStatus> layers) {
        this.stream = stream;
        this.target = target;
        this.layers = layers;
    }

    @Override
    public void onTick(Snapshot previous) {
        // The real session rescans maps and applies layer switches here: nothing to do for a synthetic target.
    }

    @Override
    public boolean startingUp() {
        return false;
    }

    @Override
    public void onDrain(long nowNs, int records) {
        int calls = drains++ < BUSY_DRAINS ? BUSY_CALLS_PER_DRAIN : 1;
        for (int i = 0; i < calls; i++) {
            stream.nextCall();
        }
    }

    @Override
    public TargetInfo target() {
        return target;
    }

    @Override
    public List<LayerStatus> layers() {
        return layers;
    }

    @Override
    public boolean targetAlive() {
        return true;
    }

    /** How long the JIT must have compiled nothing to count as idle, and the longest wait for that. */
    private static final long JIT_QUIET_MS = 40;
    private static final long JIT_WAIT_MAX_MS = 1500;

    /**
     * Waits until the JIT compiler thread has compiled nothing for {@link #JIT_QUIET_MS} (at most
     * {@link #JIT_WAIT_MAX_MS}): the warm-up queues compilations faster than the one C1 thread does them, and
     * a queue left over would be compiled while the target runs, which is what the warm-up is for avoiding.
     */
    static void awaitJitIdle() {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long deadline = System.nanoTime() + JIT_WAIT_MAX_MS * 1_000_000;
        long last = jit.getTotalCompilationTime();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = jit.getTotalCompilationTime();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= JIT_QUIET_MS * 1_000_000) {
                return;
            }
        }
    }
}
