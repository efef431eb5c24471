package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A snapshot's identity and its two figures: which one a view shows, the run state's words, the copies. */
class SnapshotTest {
    private static Figures figures(long spanNs, long decodeCalls) {
        return new Figures(spanNs, new TokenTotals(decodeCalls, 0, decodeCalls, 0, 0, decodeCalls, 0, 0, 1),
                LatencySummary.EMPTY, LatencySummary.EMPTY, List.of(new BackendTotals("CPU", 1, 2, 3)),
                new BackendTotals("CPU", 1, 2, 3), OperatorTotals.EMPTY, SchedTotals.EMPTY, CounterTotals.EMPTY,
                List.of());
    }

    private static Snapshot snapshot(RunState state) {
        return new Snapshot(3, state, new TargetInfo(1, "llama-bench", null, List.of()), figures(1_000, 2),
                figures(5_000, 10), 0, List.of(), MoeTotals.EMPTY);
    }

    @Test
    void runStateWordsAreTheOnesJsonAndTextHaveAlwaysPrinted() {
        assertEquals(List.of("running", "exited", "stopped", "done", "following", "replay"),
                Arrays.stream(RunState.values()).map(RunState::text).toList());
    }

    @Test
    void everyStateButRunningEndsTheRunAndAViewThenShowsTheRunsTotals() {
        Snapshot running = snapshot(RunState.RUNNING);
        assertFalse(running.isFinal());
        assertSame(running.interval(), running.shown());
        assertEquals(1_000, running.shown().spanNs());
        for (RunState state : RunState.values()) {
            if (state == RunState.RUNNING) {
                continue;
            }
            Snapshot ended = running.withState(state);
            assertTrue(ended.isFinal(), state.text());
            assertSame(ended.total(), ended.shown(), state.text());
            assertEquals(10, ended.shown().tokens().decodeCalls());
        }
        assertSame(running.total(), running.figures(true));
        assertSame(running.interval(), running.figures(false));
    }

    @Test
    void aChangeToBothFiguresLeavesTheRestAsItWas() {
        Snapshot s = snapshot(RunState.RUNNING).withLimits(new Limits(List.of(
                Limits.Bound.of("tensor_names", 1, "tensor_names_cap", 2, Limits.Past.capped("name_records_dropped", 3)))));
        SchedTotals sched = new SchedTotals(List.of(), List.of(), List.of(), 1, 2, 3);
        Snapshot changed = s.withFigures(f -> f.withSched(sched));
        assertSame(sched, changed.interval().sched());
        assertSame(sched, changed.total().sched());
        assertEquals(1_000, changed.interval().spanNs());
        assertEquals(5_000, changed.total().spanNs());
        assertEquals(s.interval().tokens(), changed.interval().tokens());
        assertEquals(s.total().tokens(), changed.total().tokens());
        assertEquals(s.limits(), changed.limits());
        assertEquals(s.state(), changed.state());
        assertEquals(s.sequence(), changed.sequence());
    }
}
