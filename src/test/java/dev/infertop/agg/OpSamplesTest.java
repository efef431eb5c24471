package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpSampleTotals;
import dev.infertop.model.ThreadLane;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OpSamplesTest {
    private static final int MUL_MAT = 0, SOFT_MAX = 1, COMPUTE = 16;
    private static final long PERIOD_NS = 2_000_000;
    /** Code lines: a matmul kernel, the barrier's spin, soft_max, another soft_max line, a shared one, HTTP code. */
    private static final long A = 0x10000, W = 0x20000, B = 0x30000, C = 0x50000, S = 0x60000, H = 0x40000;

    private final CpuGraphAssembler graphs = new CpuGraphAssembler(
            GraphFixture.naming(List.of("MUL_MAT", "SOFT_MAX"), COMPUTE, Set.of()));
    private final GraphFixture fixture = new GraphFixture(graphs);
    private final long[] period = {PERIOD_NS};
    private final OpSamples samples = new OpSamples(() -> period[0]);

    OpSamplesTest() {
        samples.followGraphs(graphs);
    }

    /**
     * Graph 1: MUL_MAT then SOFT_MAX on threads 7 and 8 from 1000 ns. Thread 7 reaches the barriers at 5000 and
     * 9000, thread 8 at 6000 and 8000: releases at 6000 and 9000. So 7 works on MUL_MAT in [1000, 5000), waits
     * in [5000, 6000), works on SOFT_MAX in [6000, 9000); 8 works on MUL_MAT in [1000, 6000), on SOFT_MAX in
     * [6000, 8000), waits in [8000, 9000).
     */
    private void windowGraph() {
        fixture.nodes(1, 0x1000, new int[] {MUL_MAT, SOFT_MAX}, new int[] {COMPUTE, COMPUTE});
        samples.sample(7, 2000, A);      // MUL_MAT
        samples.sample(7, 3000, S);      // MUL_MAT
        samples.sample(8, 3000, A + 8);  // MUL_MAT, the same 64-byte line as A
        samples.sample(9, 4000, H);      // a thread not in the graph: outside graphs
        samples.sample(7, 5500, W);      // barrier wait
        samples.sample(7, 7000, B);      // SOFT_MAX
        samples.sample(8, 7000, C);      // SOFT_MAX
        samples.sample(8, 7500, S + 63); // SOFT_MAX: line S has now run both ops once
        samples.sample(8, 8500, W);      // barrier wait
        fixture.arrivals(7, 1, 1000, 5000, 9000).arrivals(8, 1, 1000, 6000, 8000).finish();
    }

    @Test
    void aWindowsSamplesTeachTheirLinesAndAreNamedByThem() {
        windowGraph();
        samples.tick();
        OpSampleTotals interval = samples.interval();
        assertEquals(PERIOD_NS, interval.periodNs());
        assertEquals(9, interval.samples());
        assertEquals(0, interval.unknown(), 1e-9);
        assertEquals(2, interval.barrierWait(), 1e-9);
        assertEquals(1, interval.outsideGraphs(), 1e-9);
        // MUL_MAT: A twice, half of S twice; SOFT_MAX: B, C, half of S twice.
        assertEquals(List.of(new OpSampleTotals.Op("MUL_MAT", 3, 0.5), new OpSampleTotals.Op("SOFT_MAX", 3, 0.5)),
                interval.ops());
        assertEquals(9, interval.learnedSamples());
        assertEquals(6, interval.learnedLines(), "A, W, B, C, S, H");
    }

    @Test
    void betweenWindowsSamplesAreNamedByWhatTheWindowsTaughtAndCountedApart() {
        windowGraph();
        samples.tick();
        samples.sample(7, 20_000, A + 40);  // MUL_MAT
        samples.sample(8, 20_000, S);       // half MUL_MAT, half SOFT_MAX
        samples.sample(8, 21_000, 0x90000); // never seen in a window
        samples.tick();
        OpSampleTotals interval = samples.interval();
        assertEquals(3, interval.samples());
        assertEquals(1, interval.unknown(), 1e-9);
        assertEquals(List.of(new OpSampleTotals.Op("MUL_MAT", 1.5, 0.75), new OpSampleTotals.Op("SOFT_MAX", 0.5, 0.25)),
                interval.ops());
        assertEquals("MUL_MAT", interval.opOf(7));
        assertEquals(OpSamples.UNKNOWN, interval.opOf(8), "one unknown sample outweighs two halves");
        assertEquals(9, interval.learnedSamples(), "samples outside a window teach nothing");

        period[0] = 0; // the layer detached before the end (a stop): the run's figures keep the period it ran at
        samples.finishRun();
        OpSampleTotals run = samples.total();
        assertEquals(PERIOD_NS, run.periodNs());
        assertEquals(0, samples.interval().periodNs(), "an interval with no sample after the detach");
        assertEquals(12, run.samples());
        assertEquals(new OpSampleTotals.Between(3, 1, List.of(new OpSampleTotals.Op("MUL_MAT", 1.5, 0.75),
                new OpSampleTotals.Op("SOFT_MAX", 0.5, 0.25))), run.between(),
                "only the samples no window covered");
    }

    @Test
    void anUnattributedGraphTeachesNothing() {
        fixture.nodes(1, 0x1000, new int[] {MUL_MAT, SOFT_MAX}, new int[] {COMPUTE, COMPUTE});
        samples.sample(7, 2000, A);
        // Thread 7 reports five barriers for two groups: the arrivals fit no grouping.
        fixture.arrivals(7, 1, 1000, 3000, 5000, 7000, 8000, 9000).finish();
        samples.tick();
        assertEquals(0, samples.interval().learnedSamples());
        assertEquals(1, samples.interval().unknown(), 1e-9);
    }

    @Test
    void betweenTwoTracedGraphsAComputeThreadIsOutsideGraphs() {
        windowGraph();
        fixture.same(2, 1, 20_000);
        samples.sample(7, 15_000, H + 0x1000); // tokenising between the graphs, on a compute thread
        fixture.arrivals(7, 2, 21_000, 25_000, 29_000).arrivals(8, 2, 21_000, 26_000, 28_000).finish();
        samples.tick();
        assertEquals(2, samples.interval().outsideGraphs(), 1e-9);
    }

    @Test
    void aPauseBetweenTwoWindowsIsNotOutsideGraphs() {
        windowGraph();
        // Graph numbers stop while the windows are paused: graph 2 is the next window's first, 2 s later.
        fixture.same(2, 1, 2_000_000_000L);
        samples.sample(7, 1_000_000_000L, A + 16); // computing, untraced
        fixture.arrivals(7, 2, 2_000_001_000L, 2_000_005_000L, 2_000_009_000L)
                .arrivals(8, 2, 2_000_001_000L, 2_000_006_000L, 2_000_008_000L).finish();
        samples.tick();
        assertEquals(1, samples.interval().outsideGraphs(), 1e-9, "only the window's own thread 9");
        assertEquals(9, samples.interval().learnedSamples());
    }

    @Test
    void theLanesFillWithSampledCellsWhereNoWindowWas() {
        windowGraph();
        samples.tick();
        long nowNs = 20_025_000_000L; // mid-cell: the samples fall in the last cell
        samples.sample(7, nowNs - 1_000_000, A);
        samples.sample(7, nowNs - 500_000, W);
        samples.sample(7, nowNs - 200_000, A);
        samples.tick();
        List<ThreadLane> sampled = samples.lanes(nowNs);
        assertEquals(1, sampled.size(), "thread 7 only: thread 8 had no sample in the last 10 s");
        byte[] exactCells = new byte[sampled.getFirst().cellCount()];
        java.util.Arrays.fill(exactCells, ThreadLane.IDLE);
        exactCells[0] = (byte) OpClass.NORM.ordinal(); // an old window's cell
        ThreadLane exact = new ThreadLane(7, "RMS_NORM", sampled.getFirst().cellNs(), sampled.getFirst().endNs(),
                exactCells);
        ThreadLane merged = ThreadLane.withSamples(List.of(exact), sampled).getFirst();
        int last = merged.cellCount() - 1;
        assertEquals(OpClass.MATMUL, merged.cellClass(last));
        assertTrue(merged.sampled(last));
        assertEquals(OpClass.NORM, merged.cellClass(0));
        assertFalse(merged.sampled(0), "a window's cell stays exact");
        assertEquals("~MUL_MAT", merged.currentOp(), "the op now is the samples' where they are newer");
    }

    /** A target that starts a thread per request: strips and listed threads stay bounded, the busiest kept. */
    @Test
    void manyThreadsAreBounded() {
        windowGraph();
        samples.tick();
        long nowNs = 20_025_000_000L;
        for (int tid = 1000; tid < 1000 + 3 * OpSamples.MAX_THREADS; tid++) {
            samples.sample(tid, nowNs - 1_000_000, A);
        }
        samples.sample(7, nowNs - 900_000, A);
        samples.sample(7, nowNs - 800_000, A);
        samples.tick();
        assertEquals(OpSamples.MAX_THREADS, samples.lanes(nowNs).size());
        assertEquals(OpSamples.MAX_THREADS, samples.interval().threads().size());
        assertEquals("MUL_MAT", samples.interval().opOf(7), "the busiest thread is listed");
        assertEquals(3 * OpSamples.MAX_THREADS + 2, samples.interval().samples(), "every sample counted");
    }

}
