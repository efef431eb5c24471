package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.event.TraceListener;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.event.EventLayout;
import dev.infertop.model.BackendNames;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TraceAggregatorTest {
    private static final long MS = 1_000_000L;
    private static final long CPU_HIGH = 0xaa67c74396e6a38aL;
    private static final long CPU_LOW = 0xe3afea9236bcfc89L;
    private static final TargetInfo TARGET = new TargetInfo(42, "llama-bench", null, List.of());

    private final TraceAggregator aggregator = Routers.of(
            BackendNames.parse("aa67c74396e6a38ae3afea9236bcfc89 CPU\n"), null);

    @Test
    void splitsPrefillFromDecodeAndComputesSpeeds() {
        aggregator.start(0);
        // one 64-token prompt in 10 ms, then four decode steps of 2 ms each
        Routers.tokens(aggregator).onDecode(1, 0, 10 * MS, 0xc0, 64, 0);
        for (int i = 0; i < 4; i++) {
            long start = (20 + 5L * i) * MS;
            Routers.tokens(aggregator).onDecode(1, start, start + 2 * MS, 0xc0, 1, 0);
        }
        Snapshot snapshot = aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());

        var tokens = snapshot.interval().tokens();
        assertEquals(5, tokens.decodeCalls());
        assertEquals(1, tokens.prefillCalls());
        assertEquals(4, tokens.decodeStepCalls());
        assertEquals(64, tokens.tokensPrefill());
        assertEquals(4, tokens.tokensDecode());
        assertEquals(6400.0, tokens.prefillTokensPerSecond(), 1e-9); // 64 tokens / 10 ms
        assertEquals(500.0, tokens.decodeTokensPerSecond(), 1e-9);   // 4 tokens / 8 ms
        assertEquals(4.0, tokens.decodeThroughputPerSecond(snapshot.interval().spanNs()), 1e-9); // 4 tokens / 1 s wall
        assertEquals(1, tokens.contexts());
        assertEquals(1, snapshot.interval().ttft().count());
        assertEquals(10.0, snapshot.interval().ttft().p50Ms(), 0.01);
        assertEquals(4, snapshot.interval().tpot().count());
        assertEquals(2.0, snapshot.interval().tpot().p99Ms(), 0.01);
    }

    @Test
    void intervalsResetWhileTotalsAccumulate() {
        aggregator.start(0);
        Routers.tokens(aggregator).onDecode(1, 0, MS, 0xc0, 1, 0);
        aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        Routers.tokens(aggregator).onDecode(1, 1000 * MS, 1003 * MS, 0xc1, 1, -1);
        Snapshot second = aggregator.snapshot(2000 * MS, RunState.EXITED, TARGET, 7, List.of());

        assertEquals(1, second.interval().tokens().decodeCalls());
        assertEquals(1, second.interval().tokens().failedCalls());
        assertEquals(2, second.total().tokens().decodeCalls());
        assertEquals(2, second.total().tokens().contexts());
        assertEquals(2, second.total().tpot().count());
        assertEquals(3.0, second.total().tpot().maxMs(), 0.01);
        assertEquals(2000 * MS, second.total().spanNs());
        assertEquals(1000 * MS, second.interval().spanNs());
        assertEquals(7, second.lostEvents());
    }

    /** Encoder passes (llama_process ENCODE) are counted apart: the decode figures are those of the decode calls alone. */
    @Test
    void encodeCallsAreCountedApartFromDecodeCalls() {
        aggregator.start(0);
        // Interval 1: a 12-token encoder pass, a 3-token prompt, two decode steps, an encode of unknown size.
        Routers.tokens(aggregator).onEncode(1, 0, 4 * MS, 0xc0, 12, 0);
        Routers.tokens(aggregator).onDecode(1, 5 * MS, 7 * MS, 0xc0, 3, 0);
        Routers.tokens(aggregator).onDecode(1, 8 * MS, 9 * MS, 0xc0, 1, 0);
        Routers.tokens(aggregator).onDecode(1, 10 * MS, 11 * MS, 0xc0, 1, 0);
        Routers.tokens(aggregator).onEncode(1, 12 * MS, 13 * MS, 0xc0, -1, 0);
        Snapshot first = aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        // Interval 2: a failed 5-token encode, one decode step.
        Routers.tokens(aggregator).onEncode(1, 1000 * MS, 1001 * MS, 0xc0, 5, -1);
        Routers.tokens(aggregator).onDecode(1, 1002 * MS, 1003 * MS, 0xc0, 1, 0);
        Snapshot second = aggregator.snapshot(2000 * MS, RunState.RUNNING, TARGET, 0, List.of());

        var one = first.interval().tokens();
        assertEquals(2, one.encodeCalls());
        assertEquals(12, one.encodeTokens(), "-1 (size unknown) adds a call, no tokens");
        assertEquals(3, one.decodeCalls());
        assertEquals(1, one.prefillCalls());
        assertEquals(2, one.decodeStepCalls());
        assertEquals(0, one.failedCalls());
        assertEquals(3, one.tokensPrefill());
        assertEquals(2, one.tokensDecode());
        assertEquals(1500.0, one.prefillTokensPerSecond(), 1e-9); // 3 tokens / 2 ms: the encode's 4 ms not in it
        assertEquals(1000.0, one.decodeTokensPerSecond(), 1e-9);  // 2 tokens / 2 ms
        assertEquals(List.of(2L, 0L, 1L), one.batchSizes().subList(0, 3));
        assertEquals(1, one.contexts());
        assertEquals(1, first.interval().ttft().count());
        assertEquals(2, first.interval().tpot().count());

        var two = second.interval().tokens();
        assertEquals(1, two.encodeCalls());
        assertEquals(5, two.encodeTokens());
        assertEquals(1, two.decodeCalls());
        assertEquals(0, two.failedCalls(), "a failed encode is not a failed decode call");
        assertEquals(0, two.tokensPrefill());
        assertEquals(1, two.tokensDecode());

        var run = second.total().tokens();
        assertEquals(3, run.encodeCalls());
        assertEquals(17, run.encodeTokens());
        assertEquals(4, run.decodeCalls());
        assertEquals(3, run.tokensPrefill());
        assertEquals(3, run.tokensDecode());
        assertEquals(0, run.failedCalls());
        assertEquals(3, second.total().tpot().count());
        assertEquals(1, second.total().ttft().count());
    }

    @Test
    void withoutEncodeCallsTheEncodeFiguresAreZero() {
        aggregator.start(0);
        Routers.tokens(aggregator).onDecode(1, 0, MS, 0xc0, 8, 0);
        Snapshot snapshot = aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        assertEquals(0, snapshot.total().tokens().encodeCalls());
        assertEquals(0, snapshot.total().tokens().encodeTokens());
        assertEquals(1, snapshot.total().tokens().decodeCalls());
    }

    @Test
    void graphComputesAreCountedPerNamedBackend() {
        aggregator.start(0);
        aggregator.onGraphCompute(1, 0, 4 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onGraphCompute(1, 5 * MS, 9 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onGraphCompute(1, 10 * MS, 11 * MS, 0xb1, 1, 2, 5, 0);
        aggregator.onCpuGraphCompute(1, 0, 3 * MS, 0xa0, 620, 0);
        Snapshot snapshot = aggregator.snapshot(100 * MS, RunState.RUNNING, TARGET, 0, List.of());

        BackendTotals cpu = snapshot.interval().backends().get(0);
        assertEquals(new BackendTotals("CPU", 2, 1240, 8 * MS), cpu);
        assertEquals(0.08, cpu.busyFraction(snapshot.interval().spanNs()), 1e-12);
        assertEquals("guid:00000000000000010000000000000002", snapshot.interval().backends().get(1).backend());
        assertEquals(1, snapshot.interval().cpuGraphs().computes());
        assertEquals(620, snapshot.interval().cpuGraphs().nodes());
    }

    /**
     * A graph from 900 ms to 1,300 ms spans the tick at 1,000 ms: 100 ms of it belong to the first interval (read
     * in flight at the tick), 300 ms to the second. Without the split, the second interval (700 ms of graphs of
     * its own) would hold 1,100 ms of busy time in 1,000 ms.
     */
    @Test
    void aGraphSpanningAnIntervalEdgeIsSplitAcrossTheTwoIntervals() {
        long[] inFlightStartNs = {900 * MS};
        aggregator.withGraphsInFlight(each -> {
            if (inFlightStartNs[0] >= 0) {
                each.graph(false, 7, inFlightStartNs[0], CPU_HIGH, CPU_LOW);
                each.graph(true, 7, inFlightStartNs[0], 0, 0);
            }
        });
        aggregator.start(0);
        aggregator.onGraphCompute(7, 0, 800 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onCpuGraphCompute(7, 0, 800 * MS, 0xa0, 620, 0);
        Snapshot first = aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        inFlightStartNs[0] = -1;
        aggregator.onGraphCompute(7, 900 * MS, 1300 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onCpuGraphCompute(7, 900 * MS, 1300 * MS, 0xa0, 620, 0);
        aggregator.onGraphCompute(7, 1300 * MS, 2000 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onCpuGraphCompute(7, 1300 * MS, 2000 * MS, 0xa0, 620, 0);
        Snapshot second = aggregator.snapshot(2000 * MS, RunState.RUNNING, TARGET, 0, List.of());

        assertEquals(new BackendTotals("CPU", 1, 620, 900 * MS), first.interval().backends().get(0));
        assertEquals(900 * MS, first.interval().cpuGraphs().busyNs());
        assertEquals(new BackendTotals("CPU", 2, 1240, 1000 * MS), second.interval().backends().get(0));
        assertEquals(1.0, second.interval().backends().get(0).busyFraction(second.interval().spanNs()), 1e-12);
        assertEquals(1000 * MS, second.interval().cpuGraphs().busyNs());
        assertEquals(new BackendTotals("CPU", 3, 1860, 1900 * MS), second.total().backends().get(0));
    }

    /**
     * A record read after the tick that its graph ended before (the ring drained late) adds to the run, and to
     * the interval only the part after the tick: the interval already shown cannot take it back, and the next one
     * is not made to hold more than its length.
     */
    @Test
    void aLateRecordAddsItsPartBeforeTheIntervalToTheRunOnly() {
        aggregator.start(0);
        aggregator.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        aggregator.onGraphCompute(7, 400 * MS, 1100 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        aggregator.onGraphCompute(7, 1100 * MS, 2000 * MS, 0xb0, CPU_HIGH, CPU_LOW, 620, 0);
        Snapshot second = aggregator.snapshot(2000 * MS, RunState.RUNNING, TARGET, 0, List.of());

        assertEquals(1000 * MS, second.interval().backends().get(0).busyNs());
        assertEquals(1600 * MS, second.total().backends().get(0).busyNs());
    }

    /**
     * A layer's records go from the decoder straight to its registered aggregator (one call, no lookup per record);
     * the token layer's to its own aggregator, the graph layer's stay here; a registration after the decoder is made
     * would miss records and fails.
     */
    @Test
    void layerRecordsGoStraightToTheAggregatorRegisteredForThem() {
        SchedAggregator sched = new SchedAggregator(42, new NameTable(), () -> 0);
        TraceAggregator routed = Routers.of(
                BackendNames.parse("aa67c74396e6a38ae3afea9236bcfc89 CPU\n"), null, sched);
        assertSame(Routers.tokens(routed), routed.listenerFor(EventLayout.EVENT_DECODE));
        assertSame(Routers.tokens(routed), routed.listenerFor(EventLayout.EVENT_GRAPH_TOKENS));
        assertSame(routed, routed.listenerFor(EventLayout.EVENT_GRAPH));
        assertSame(routed, routed.listenerFor(EventLayout.EVENT_NODE), "no operator aggregator: ignored here");
        TraceListener schedRecords = routed.listenerFor(EventLayout.EVENT_SCHED_OFF);
        assertNotSame(routed, schedRecords);

        routed.start(0);
        // Thread 7 ran 100, was preempted at 1000 until 1300: runnable 300.
        schedRecords.onSchedOff(7, 1000, 1300, 0, 100, 0, 1, true);
        Snapshot snapshot = routed.snapshot(1000 * MS, RunState.RUNNING, TARGET, 0, List.of());
        assertEquals(new SchedThreadTotals(7, 100, 300, 0, 1, 1),
                snapshot.interval().sched().threads().getFirst());

        assertThrows(IllegalStateException.class, () -> routed.register(new CounterAggregator()));
    }
}
