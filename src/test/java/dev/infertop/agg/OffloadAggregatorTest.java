package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.model.BackendNames;
import dev.infertop.model.Figures;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.OffloadTotals.Completion;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Enqueue against device-complete time, and copies by tensor and destination, with exact numbers. */
class OffloadAggregatorTest {
    // GUIDs from config/backends.conf
    private static final long CPU_HIGH = 0xaa67c74396e6a38aL, CPU_LOW = 0xe3afea9236bcfc89L;
    private static final long VK_HIGH = 0xb8f74f86403ce102L, VK_LOW = 0x91c8dde9023fc02bL;
    private static final long VK0 = 0x1000, VK1 = 0x2000, CPU = 0x3000;

    private final NameTable names = new NameTable();
    private final BackendKeys keys = new BackendKeys(BackendNames.parse(
            "aa67c74396e6a38ae3afea9236bcfc89 CPU\nb8f74f86403ce10291c8dde9023fc02b Vulkan\n"));
    private final OffloadAggregator aggregator = new OffloadAggregator(keys, names);

    private int name(String text) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(64);
            bytes.copyFrom(MemorySegment.ofArray((text + "\0").getBytes(StandardCharsets.UTF_8)));
            return names.intern(bytes, 0, 64);
        }
    }

    @Test
    void deviceTimeRunsFromTheFirstQueuedComputeToTheSynchronizeThatClosesIt() {
        // Two Vulkan computes queued (1 ms and 2 ms in their calls), the CPU computing in between, then the
        // host synchronizes Vulkan from 10 ms to 25 ms: device-complete 0 → 25 ms, enqueue 3 ms, wait 15 ms.
        aggregator.onGraphCompute(7, 0, 1_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onGraphCompute(7, 2_000_000, 6_000_000, CPU, CPU_HIGH, CPU_LOW);
        aggregator.onGraphCompute(7, 7_000_000, 9_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onBackendWait(10_000_000, 25_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onBackendWait(25_000_000, 25_001_000, CPU, CPU_HIGH, CPU_LOW);
        // A synchronize with nothing queued closes nothing; a compute after it stays open.
        aggregator.onBackendWait(26_000_000, 26_500_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onGraphCompute(7, 30_000_000, 31_000_000, VK0, VK_HIGH, VK_LOW);

        OffloadTotals run = aggregator.figures(true);
        OffloadTotals.Backend vulkan = run.backend("Vulkan");
        assertEquals(new OffloadTotals.Backend("Vulkan", Completion.DEVICE_COMPLETE, 3, 4_000_000, 2, 3_000_000,
                25_000_000, 2, 15_500_000, 0, 0, 0), vulkan);
        OffloadTotals.Backend cpu = run.backend("CPU");
        assertEquals(Completion.IN_CALL, cpu.completion());
        assertEquals(4_000_000, cpu.enqueueNs());
        assertEquals(0, cpu.deviceNs());
    }

    @Test
    void eachBackendInstanceIsClosedByItsOwnSynchronize() {
        aggregator.onGraphCompute(1, 0, 1_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onGraphCompute(1, 1_000_000, 2_000_000, VK1, VK_HIGH, VK_LOW);
        aggregator.onBackendWait(3_000_000, 4_000_000, VK1, VK_HIGH, VK_LOW);
        OffloadTotals.Backend vulkan = aggregator.figures(true).backend("Vulkan");
        assertEquals(1, vulkan.completedGraphs());
        assertEquals(3_000_000, vulkan.deviceNs()); // VK1: 1 ms → 4 ms; VK0 still open
    }

    @Test
    void aBackendNeverSynchronizedIsEnqueueOnly() {
        aggregator.onGraphCompute(1, 0, 1_000_000, VK0, VK_HIGH, VK_LOW);
        OffloadTotals.Backend vulkan = aggregator.figures(true).backend("Vulkan");
        assertEquals(Completion.ENQUEUE_ONLY, vulkan.completion());
        assertEquals("enqueue only", vulkan.completion().label());
        assertEquals(1_000_000, vulkan.enqueueNs());
        assertEquals(0, vulkan.deviceNs());
    }

    @Test
    void copiesAreCountedPerTensorAndDestinationAndInTheDestinationBackend() {
        aggregator.onGraphCompute(1, 0, 1, VK0, VK_HIGH, VK_LOW); // the backends are known
        aggregator.onGraphCompute(1, 1, 2, CPU, CPU_HIGH, CPU_LOW);
        int embd = name("embd");
        aggregator.onTensorCopy(0, 500, 16 * 1024, 0, 256, 16, 1, 1, embd, name("Vulkan0#embd#0"));
        aggregator.onTensorCopy(1000, 1200, 1024, 0, 256, 1, 1, 1, embd, name("Vulkan0#embd#0"));
        aggregator.onTensorCopy(2000, 2100, 1024, 0, 256, 1, 1, 1, name("l_out-1"), name("CPU#l_out-1#0"));
        aggregator.onTensorCopy(3000, 3100, 8, 26, 2, 1, 1, 1, name("odd"), name("no-hash"));

        OffloadTotals run = aggregator.figures(true);
        assertEquals(new OffloadTotals.Copy("embd", "Vulkan0", 0, "256x16x1x1", 2, 17 * 1024, 700),
                run.copies().get(0));
        assertEquals(new OffloadTotals.Copy("l_out-1", "CPU", 0, "256x1x1x1", 1, 1024, 100), run.copies().get(1));
        assertEquals("unknown", run.copies().get(2).toBackend());
        OffloadTotals.Backend vulkan = run.backend("Vulkan");
        assertEquals(2, vulkan.copiesIn());
        assertEquals(17 * 1024, vulkan.bytesIn());
        assertEquals(700, vulkan.copyNs());
        assertEquals(1024, run.backend("CPU").bytesIn());
    }

    @Test
    void anIntervalHoldsWhatHappenedSinceThePreviousOne() {
        aggregator.onGraphCompute(1, 0, 1_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onBackendWait(1_000_000, 2_000_000, VK0, VK_HIGH, VK_LOW);
        Figures empty = new Figures(0, null, null, null, java.util.List.of(), null, null, null, null,
                java.util.List.of());
        assertEquals(2_000_000, aggregator.addInterval(empty).offload().backend("Vulkan").deviceNs());
        aggregator.onGraphCompute(1, 5_000_000, 6_000_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onBackendWait(6_000_000, 9_000_000, VK0, VK_HIGH, VK_LOW);
        assertEquals(4_000_000, aggregator.addInterval(empty).offload().backend("Vulkan").deviceNs());
        assertEquals(6_000_000, aggregator.addTotal(empty).offload().backend("Vulkan").deviceNs());
    }

    @Test
    void vulkansHostDispatchIsCountedApartFromDeviceTime() {
        assertEquals(java.util.List.of(), aggregator.figures(true).dispatch()); // nothing seen: nothing said
        aggregator.onHostDispatch(0, 300, false);
        aggregator.onHostDispatch(400, 1400, true);
        aggregator.onHostDispatch(2000, 2100, false);
        assertEquals(java.util.List.of(new OffloadTotals.Dispatch("Vulkan", 2, 400, 1, 1000)),
                aggregator.figures(true).dispatch());
    }

    @Test
    void copiedTensorsPastTheCapAreFoldedNotLost() {
        aggregator.onGraphCompute(1, 0, 1, VK0, VK_HIGH, VK_LOW);
        for (int i = 0; i <= OffloadAggregator.MAX_COPIES; i++) {
            aggregator.onTensorCopy(0, 1, 4, 0, 1, 1, 1, 1, name("t" + i), name("Vulkan0#t" + i + "#0"));
        }
        OffloadTotals run = aggregator.figures(true);
        assertEquals(OffloadAggregator.MAX_COPIES, run.copies().size());
        assertEquals(1, run.copiesFolded());
        assertEquals(4L * (OffloadAggregator.MAX_COPIES + 1), run.backend("Vulkan").bytesIn());
    }

    private void copy(int tid, long bytes, String src, String dst) {
        aggregator.onTensorCopy(tid, 0, 1_000, bytes, 0, bytes / 4, 1, 1, 1, name(src), name(dst));
    }

    @Test
    void theBytesADecodeCallsThreadCopiedAreItsTokensByTheTokenLayersDecodeRecord() {
        // Wired as the pipeline wires it: the decoder hands llama_decode records to the token layer (listenerFor),
        // which tells the offload aggregator.
        TraceAggregator trace = Routers.of(BackendNames.parse(""), null);
        trace.register(aggregator);
        // A prompt of 16 tokens: 16 rows of 1024 bytes and 16 positions of 4; then two generated tokens of
        // 1024 + 4 bytes each. Thread 9 copied 100 bytes in a call that has not returned yet.
        copy(7, 16 * 1024, "embd", "Vulkan0#embd#0");
        copy(7, 16 * 4, "inp_pos", "Vulkan0#inp_pos#0");
        copy(9, 100, "embd", "Vulkan0#embd#0");
        trace.listenerFor(EventLayout.EVENT_DECODE).onDecode(7, 0, 5_000_000, 0xc0, 16, 0);
        OffloadTotals first = aggregator.figures(false);
        assertEquals(new OffloadTotals.TokenBytes(16, 16 * 1028, 0, 0), first.perToken());
        assertEquals(1028.0, first.perToken().bytesPerPromptToken());
        assertTrue(Double.isNaN(first.perToken().bytesPerGeneratedToken()), "no generated token: NaN, not 0");
        aggregator.addInterval(new Figures(0, null, null, null, List.of(), null, null, null, null, List.of()));
        for (int token = 0; token < 2; token++) {
            copy(7, 1024, "embd", "Vulkan0#embd#0");
            copy(7, 4, "inp_pos", "Vulkan0#inp_pos#0");
            trace.listenerFor(EventLayout.EVENT_DECODE).onDecode(7, 0, 1_000_000, 0xc0, 1, 0);
        }
        OffloadTotals interval = aggregator.figures(false);
        assertEquals(new OffloadTotals.TokenBytes(0, 0, 2, 2 * 1028), interval.perToken());
        assertEquals(1028.0, interval.perToken().bytesPerGeneratedToken());
        assertEquals(new OffloadTotals.TokenBytes(16, 16 * 1028, 2, 2 * 1028), aggregator.figures(true).perToken());
        trace.listenerFor(EventLayout.EVENT_DECODE).onDecode(9, 0, 1_000_000, 0xc0, 1, 0);
        assertEquals(new OffloadTotals.TokenBytes(16, 16 * 1028, 3, 2 * 1028 + 100),
                aggregator.figures(true).perToken(), "thread 9's bytes are its own call's");
    }

    @Test
    void bytesInPerGraphAreTheBackendsCopiesOverItsGraphs() {
        aggregator.onGraphCompute(7, 0, 1_000, VK0, VK_HIGH, VK_LOW);
        aggregator.onGraphCompute(7, 2_000, 3_000, VK0, VK_HIGH, VK_LOW);
        copy(7, 1000, "embd", "Vulkan0#embd#0");
        copy(7, 24, "inp_pos", "Vulkan0#inp_pos#0");
        assertEquals(512.0, aggregator.figures(true).backend("Vulkan").bytesInPerGraph());
    }

    @Test
    void theNodesTheCpuRanOnceADeviceComputedAreCountedByNamePerGraph() {
        final int none = 0, mulMat = 1, getRows = 2, add = 3;
        CpuGraphAssembler graphs = new CpuGraphAssembler(
                GraphFixture.naming(List.of("NONE", "MUL_MAT", "GET_ROWS", "ADD"), 0, Set.of(none)));
        GraphFixture fixture = new GraphFixture(graphs);
        aggregator.followGraphs(graphs);
        int embd = name("inp_embd"), ffn = name("ffn_out-1"), view = name("view-0");
        // Graph 1: before any device computed (a CPU-only run so far): not an offloaded graph.
        // (A graph is told when the next one starts: graph 2's first node finishes it.)
        fixture.node(1, 0, 0, 0x10, getRows, 0, 256, 16, 1, 1, 0, 0, 0, embd);
        // Graphs 2 and 3: the embedding stays on the CPU each time; graph 3 also an ADD; views compute nothing.
        fixture.node(2, 1_000, 0, 0x20, getRows, 0, 256, 16, 1, 1, 0, 0, 0, embd);
        aggregator.onGraphCompute(7, 100, 200, VK0, VK_HIGH, VK_LOW);
        fixture.node(2, 1_000, 1, 0x21, none, 0, 256, 16, 1, 1, 0, 0, 0, view);
        fixture.node(3, 2_000, 0, 0x30, getRows, 0, 256, 1, 1, 1, 0, 0, 0, embd)
                .node(3, 2_000, 1, 0x31, add, 0, 256, 1, 1, 1, 0, 0, 0, ffn)
                .node(3, 2_000, 2, 0x32, mulMat, 0, 256, 1, 1, 1, 0, 0, 0, ffn);
        fixture.finish();
        OffloadTotals.StayedOnCpu stayed = aggregator.figures(true).stayedOnCpu();
        assertEquals(2, stayed.cpuGraphs());
        assertEquals(List.of(new OffloadTotals.StayedOnCpu.Node("GET_ROWS", "inp_embd", "256x16x1x1", 2),
                new OffloadTotals.StayedOnCpu.Node("ADD", "ffn_out-1", "256x1x1x1", 1),
                new OffloadTotals.StayedOnCpu.Node("MUL_MAT", "ffn_out-1", "256x1x1x1", 1)), stayed.nodes());
        assertEquals(Map.of("GET_ROWS", 1.0, "ADD", 0.5, "MUL_MAT", 0.5), stayed.opsPerGraph());
        assertEquals(0.5, stayed.runsPerGraph(stayed.nodes().get(1)));
        assertEquals(0, stayed.nodesFolded());
    }
}
