package dev.infertop.session;

import dev.infertop.io.ConfigFiles;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The collector's two costs, each with every aggregator of the default build: the record path (one synthetic
 * llama decode call's records, as the probes send them: graph walk, nodes, two threads' barrier arrivals, the
 * call, through the decoder and every aggregator) and the tick (the snapshot of an interval of
 * {@link #CALLS_PER_TICK} calls). The forks run with the JVM options infertop's launcher gives (C1 only, serial
 * GC, the small heap), so the figures are the product's. Run by {@code src/scripts/jmh.sh}, never by the build.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
        "-Xms32m", "-Xmx160m", "-Xmn6m", "--enable-native-access=ALL-UNNAMED"})
public class PipelineBench {
    /** A tick's worth of decode calls at ~70 calls a second (the synthetic stream's 14 ms a call). */
    static final int CALLS_PER_TICK = 70;

    /** One pipeline fed by the synthetic stream. */
    @State(Scope.Thread)
    public static class Fed {
        Pipeline pipeline;
        SyntheticDecodeStream stream;
        final TargetInfo target = new TargetInfo(1, "bench", null, List.of());
        long calls;

        @Setup(Level.Trial)
        public void open() {
            var layout = SyntheticDecodeStreamTest.layout(SyntheticDecodeStreamTest.OPS);
            var backends = ConfigFiles.backendNames();
            pipeline = Pipeline.build(layout, backends, 0, () -> 0, (signature, groups, ids, layers) -> false,
                    address -> "");
            long startNs = 1_000_000_000L;
            pipeline.aggregator().start(startNs);
            stream = new SyntheticDecodeStream(pipeline.decoder(), layout, backends.guidOf("CPU"), startNs);
        }

        @TearDown(Level.Trial)
        public void close() {
            stream.close();
        }

        Snapshot snapshot() {
            return pipeline.aggregator().snapshot(stream.nowNs(), RunState.RUNNING, target, 0, List.of());
        }
    }

    /** The same, with an interval's calls recorded before each measured tick. */
    @State(Scope.Thread)
    public static class IntervalFed extends Fed {
        @Setup(Level.Invocation)
        public void recordInterval() {
            for (int i = 0; i < CALLS_PER_TICK; i++) {
                stream.nextCall();
            }
        }
    }

    /** One decode call's records; a snapshot every {@link #CALLS_PER_TICK} calls keeps the intervals bounded. */
    @Benchmark
    public Object recordPath(Fed fed) {
        fed.stream.nextCall();
        return ++fed.calls % CALLS_PER_TICK == 0 ? fed.snapshot() : null;
    }

    /** The tick: one interval's snapshot (what every view and writer then reads). */
    @Benchmark
    public Snapshot tick(IntervalFed fed) {
        return fed.snapshot();
    }
}
