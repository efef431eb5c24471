package dev.infertop.agg;

import dev.infertop.event.EventLayout;
import dev.infertop.event.ExpertIds;
import dev.infertop.event.NameTable;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.MoeTimeline;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MoE ids reads as flight-recorder instants: one per read, its per-expert counts bounded, the payload ring safe. */
class MoeTimelineTest {
    private final Arena arena = Arena.ofAuto();

    private final MoeAggregator moe = new MoeAggregator(new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return "NONE";
        }

        @Override
        public boolean isEmpty(int op) {
            return false;
        }

        @Override
        public int computeFlag() {
            return 0;
        }
    }, new NameTable(), (signature, groups, ids, layers) -> true);

    /** An ids record of {@code rows} rows of 2 experts, rows 32 bytes apart (a view of an 8-expert argsort). */
    private void ids(int tid, long atNs, long seq, int layer, int[][] rows) {
        MemorySegment data = arena.allocate(EventLayout.MOE_MAX_ID_BYTES, 8);
        for (int t = 0; t < rows.length; t++) {
            for (int j = 0; j < rows[t].length; j++) {
                data.set(ValueLayout.JAVA_INT, 32L * t + 4L * j, rows[t][j]);
            }
        }
        moe.onMoe(tid, atNs, seq, 0xabc, EventLayout.MOE_IDS, 1, 32 * (rows.length - 1) + 8, layer, 2, rows.length, 32,
                false, ExpertIds.of(data, 32 * (rows.length - 1) + 8));
    }

    @Test
    void eachIdsReadIsOneInstantOnTheCopyingThreadWithItsBatchCounts() {
        FlightRecorder flight = new FlightRecorder(64, 1_000_000_000L);
        moe.keepForSnapshots(flight);
        moe.onMoe(1, 0xabc, EventLayout.MOE_GRAPH, 0, 1, -1, 0, 0, 0, false, ExpertIds.NONE);
        // A 4-token prefill batch in layer 3: expert 0 gets 3 tokens, 1, 2 and 5 one each, 7 two.
        ids(42, 1_000, 1, 3, new int[][] {{0, 1}, {0, 2}, {7, 0}, {5, 7}});
        // A decode step in layer 0 on another thread.
        ids(43, 2_000, 1, 0, new int[][] {{6, 4}});

        FlightRecorder.Window window = flight.copyWindow(3_000);
        List<FlightRecorder.Slice> slices = window.slices();
        assertEquals(2, slices.size(), "one record per read, not per token");
        FlightRecorder.Slice prefill = slices.get(0);
        assertEquals(FlightRecorder.Kind.INSTANT, prefill.kind());
        assertEquals(42, prefill.tid());
        assertEquals(1_000, prefill.startNs());
        MoeTimeline.Activation a = MoeTimeline.read(window, prefill);
        assertEquals(3, a.layer());
        assertEquals(4, a.tokens());
        assertEquals(2, a.expertsUsed());
        assertEquals(5, a.expertsActive());
        assertArrayEquals(new int[] {0, 1, 2, 5, 7}, a.experts());
        assertArrayEquals(new long[] {3, 1, 1, 1, 2}, a.counts());
        assertTrue(a.complete());
        MoeTimeline.Activation decode = MoeTimeline.read(window, slices.get(1));
        assertEquals(43, slices.get(1).tid());
        assertEquals(0, decode.layer());
        assertArrayEquals(new int[] {4, 6}, decode.experts());
        assertArrayEquals(new long[] {1, 1}, decode.counts());
    }

    @Test
    void aBatchOverManyExpertsKeepsTheBoundAndSaysSo() {
        FlightRecorder flight = new FlightRecorder(8, 1_000_000_000L);
        MoeTimeline timeline = new MoeTimeline(flight);
        long[] byExpert = new long[100];
        for (int e = 0; e < byExpert.length; e++) {
            byExpert[e] = e + 1;
        }
        timeline.activation(7, 10, 1, 400, 8, byExpert);
        FlightRecorder.Window window = flight.copyWindow(20);
        MoeTimeline.Activation a = MoeTimeline.read(window, window.slices().getFirst());
        assertEquals(MoeTimeline.MAX_EXPERTS_PER_RECORD, a.experts().length);
        assertEquals(100, a.expertsActive());
        assertFalse(a.complete());
        assertEquals(63, a.experts()[63]);
        assertEquals(64, a.counts()[63]);
    }

    @Test
    void anInstantWhosePayloadWasOverwrittenIsLeftOutAndOthersAreNotActivations() {
        // Payload ring of 1024 longs (half of 2048 records); a read of 100 active experts takes 4 + 64: 15 fit.
        FlightRecorder flight = new FlightRecorder(2048, 1_000_000_000L);
        MoeTimeline timeline = new MoeTimeline(flight);
        long[] byExpert = new long[100];
        java.util.Arrays.fill(byExpert, 1);
        for (int k = 0; k < 20; k++) {
            timeline.activation(7, k, k, 400, 8, byExpert);
        }
        flight.record(FlightRecorder.Kind.INSTANT, 7, 30, 30, flight.label("other"), -1, 5);
        FlightRecorder.Window window = flight.copyWindow(40);
        assertEquals(15 + 1, window.slices().size());
        assertEquals(5, MoeTimeline.read(window, window.slices().getFirst()).layer(), "reads 0..4 overwritten");
        assertNull(MoeTimeline.read(window, window.slices().getLast()));
    }
}
