package dev.infertop.session;

import dev.infertop.model.RunState;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * A benchmark, not a test (the suite's name patterns leave it out; it asserts nothing): the collector thread's CPU
 * time per synthetic decode call (a llama decode step's records: graph walk, nodes, barrier arrivals, the call)
 * through the decoder and every aggregator, a snapshot every 70 calls, in six rounds of 20,000 calls, the first
 * ones warming the JIT. Run it by hand, interleaved with the same class on another commit, to compare the record
 * path's cost: {@code mvn -o -q test -Dfuzz.skip=true -Dtest=PipelineCostBench} prints one BENCH line of ns a call.
 */
class PipelineCostBench {
    @Test
    void costPerCall() {
        var layout = SyntheticDecodeStreamTest.layout(SyntheticDecodeStreamTest.OPS);
        var backends = dev.infertop.io.ConfigFiles.backendNames();
        Pipeline pipeline = Pipeline.build(layout, backends, 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        long startNs = 1_000_000_000L;
        pipeline.aggregator().start(startNs);
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        try (SyntheticDecodeStream stream = new SyntheticDecodeStream(pipeline.decoder(), layout,
                backends.guidOf("CPU"), startNs)) {
            StringBuilder out = new StringBuilder("BENCH");
            for (int round = 0; round < 6; round++) {
                long cpu0 = threads.getCurrentThreadCpuTime();
                int calls = 20_000;
                for (int i = 0; i < calls; i++) {
                    stream.nextCall();
                    if (i % 70 == 69) {
                        pipeline.aggregator().snapshot(stream.nowNs(), RunState.RUNNING,
                                new TargetInfo(1, "bench", null, List.of()), 0, List.of());
                    }
                }
                long ns = threads.getCurrentThreadCpuTime() - cpu0;
                out.append(String.format(java.util.Locale.ROOT, " %.0f", (double) ns / calls));
            }
            System.out.println(out);
        }
    }
}
