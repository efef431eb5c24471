package dev.infertop.agg;

import dev.infertop.history.HdrBuckets;
import dev.infertop.event.NameTable;
import dev.infertop.history.FlightRecorder.Kind;
import dev.infertop.history.FlightRecorder.Slice;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The flight recorder's ring and window, and the op slices the operator attribution records into it. */
class FlightRecorderTest {
    @Test
    void keepsTheLastCapacityRecordsWithinTheWindow() {
        FlightRecorder recorder = new FlightRecorder(4, 1_000);
        int label = recorder.label("x");
        assertEquals(label, recorder.label("x"), "one id per label");
        for (int i = 0; i < 6; i++) {
            recorder.record(Kind.OP, 1, i * 100, i * 100 + 50, label, -1, i);
        }
        // 6 written, 4 kept (values 2..5); the window from 1500 - 1000 = 500 keeps those ending at >= 500
        FlightRecorder.Window window = recorder.copyWindow(1_500);
        assertEquals(List.of(5L), window.slices().stream().map(Slice::value).toList());
        FlightRecorder.Window wide = recorder.copyWindow(1_000);
        assertEquals(List.of(2L, 3L, 4L, 5L), wide.slices().stream().map(Slice::value).toList());
        assertTrue(wide.truncated(), "the ring overwrote records the window would have held");
        assertEquals("x", wide.label(wide.slices().getFirst().label()));
    }

    @Test
    void notTruncatedWhileTheRingHoldsTheWholeWindow() {
        FlightRecorder recorder = new FlightRecorder(8, 1_000);
        recorder.record(Kind.TOKEN, 1, 10, 20, recorder.label("decode"), 0, 1);
        recorder.counter(recorder.label("L3 MB/s"), 30, 1.5);
        FlightRecorder.Window window = recorder.copyWindow(500);
        assertFalse(window.truncated());
        assertEquals(1.5, window.slices().get(1).counterValue());
    }

    /**
     * The ring takes what the window needs: at a steady rate whose window spans about two chunks, chunks whose
     * records all ended before the window are reused, so ten chunks' worth of records live in three or four.
     */
    @Test
    void chunksWhoseRecordsLeftTheWindowAreReused() {
        int chunk = FlightRecorder.CHUNK_RECORDS;
        FlightRecorder recorder = new FlightRecorder(32 * chunk, 2L * chunk); // 1 ns a record: the window ~2 chunks
        int label = recorder.label("op");
        for (long n = 0; n < 10L * chunk; n++) {
            recorder.record(Kind.OP, 1, n, n + 1, label, -1, n);
        }
        assertTrue(recorder.chunksHeld() <= 4, recorder.chunksHeld() + " chunks");
        FlightRecorder.Window window = recorder.copyWindow(10L * chunk);
        assertEquals(2L * chunk + 1, window.slices().size(), "every record that ended within the window");
        assertEquals(8L * chunk - 1, window.slices().getFirst().value(), "the first one ends at its start");
        assertFalse(window.truncated(), "nothing the window holds was dropped");
    }

    /** A burst within the window fills the ring to its capacity, record by record, across chunks. */
    @Test
    void aBurstKeepsExactlyTheLastCapacityRecordsAcrossChunks() {
        int chunk = FlightRecorder.CHUNK_RECORDS;
        int capacity = 3 * chunk + 5;
        FlightRecorder recorder = new FlightRecorder(capacity, 1_000_000_000L);
        int label = recorder.label("op");
        long total = 5L * chunk + 17;
        for (long n = 0; n < total; n++) {
            recorder.record(Kind.OP, 1, 1_000 + n, 1_000 + n, label, -1, n);
        }
        assertEquals(5, recorder.chunksHeld(), "the capacity's four chunks and the one being filled");
        FlightRecorder.Window window = recorder.copyWindow(2_000_000);
        assertEquals(capacity, window.slices().size());
        assertEquals(total - capacity, window.slices().getFirst().value());
        assertEquals(total - 1, window.slices().getLast().value());
        assertTrue(window.truncated(), "records within the window were dropped for the capacity");
        assertFalse(recorder.amend(total - capacity - 1, 7, 7), "dropped");
        assertTrue(recorder.amend(total - capacity, 7, 99));
        assertEquals(99, recorder.copyWindow(2_000_000).slices().getFirst().value());
    }

    private static final int NONE = 0, ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 4, VIEW = 5;
    private static final int COMPUTE = 16;

    private final OpNaming naming = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW").get(op);
        }

        @Override
        public boolean isEmpty(int op) {
            return op == NONE || op == VIEW;
        }

        @Override
        public int computeFlag() {
            return COMPUTE;
        }
    };

    private static void arrivals(OperatorAggregator aggregator, int tid, long startNs, long... times) {
        new GraphFixture(aggregator).arrivals(tid, 1, startNs, times);
    }

    @Test
    void recordsEachThreadsWorkAndWaitPerOpGroup() {
        OperatorAggregator aggregator = new OperatorAggregator(naming, new NameTable());
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000);
        IntervalHistograms histograms = new IntervalHistograms(10);
        aggregator.keepForSnapshots(recorder, histograms);
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD, ADD};
        int[] flags = {COMPUTE, COMPUTE, COMPUTE, COMPUTE, COMPUTE, 0};
        for (int i = 0; i < ops.length; i++) {
            new GraphFixture(aggregator).node(1, 0, i, 0x1000 + i, ops[i], flags[i], 8, 1, 1, 1, 0, 0, 0, 40 + i);
        }
        new GraphFixture(aggregator).fused(7, 1, 2, 0x1002, 0x1003);
        arrivals(aggregator, 7, 0, 100, 130, 200, 210);
        arrivals(aggregator, 8, 10, 120, 125, 190, 210);
        aggregator.finishLastGraph();

        FlightRecorder.Window window = recorder.copyWindow(1_000);
        List<String> slices = window.slices().stream().map(s -> s.kind() + " " + s.tid() + " "
                + window.label(s.label()) + " " + s.startNs() + ".." + s.endNs() + " name#" + s.detail()).toList();
        // releases 120, 130, 200 (see OperatorAggregatorTest); a fused group is named by its last node (43)
        assertEquals(List.of(
                "OP 7 MUL_MAT 0..100 name#40", "WAIT 7 MUL_MAT 100..120 name#40",
                "OP 8 MUL_MAT 10..120 name#40",
                "OP 7 RMS_NORM+MUL 120..130 name#43",
                "OP 8 RMS_NORM+MUL 120..125 name#43", "WAIT 8 RMS_NORM+MUL 125..130 name#43",
                "OP 7 ADD 130..200 name#44",
                "OP 8 ADD 130..190 name#44", "WAIT 8 ADD 190..200 name#44"), slices);

        histograms.beginInterval(5_000, 6_000);
        aggregator.interval(List.of());
        List<Histogram> mulMat = histograms.copy().get("op:MUL_MAT").stream()
                .map(IntervalHistograms.Encoded::decode).toList();
        assertEquals(1, mulMat.size());
        assertEquals(1, mulMat.getFirst().getTotalCount());
        assertEquals(120, mulMat.getFirst().getMaxValue());
        assertEquals(5_000, mulMat.getFirst().getStartTimeStamp());
        assertEquals(6_000, mulMat.getFirst().getEndTimeStamp());
        assertEquals(List.of("op:MUL_MAT", "op:RMS_NORM+MUL", "op:ADD"), List.copyOf(histograms.copy().keySet()));
    }

    @Test
    void flopsAreEstimatedFromOpAndShapes() {
        // MUL_MAT [4096 x 1] from K = 1024: 2·1024·4096
        assertEquals(2L * 1024 * 4096, OperatorAggregator.flopsOf("MUL_MAT", 4096, 1, 1, 1, 1024));
        assertEquals(-1, OperatorAggregator.flopsOf("MUL_MAT", 4096, 1, 1, 1, -1), "K unknown");
        assertEquals(-1, OperatorAggregator.flopsOf("MUL_MAT_ID", 4096, 2, 1, 1, 1024), "experts unknown");
        assertEquals(8 * 2 * 3, OperatorAggregator.flopsOf("ADD", 8, 2, 3, 1, -1), "one per output element");
        assertEquals(64, OperatorAggregator.flopsOf("SOFT_MAX", 64, 0, 0, 0, -1), "a zero dimension counts as 1");
    }

    @Test
    void intervalsPastTheBoundFoldIntoABaseSoTheLogStillAddsUpToTheRun() {
        IntervalHistograms histograms = new IntervalHistograms(2);
        HdrBuckets buckets = new HdrBuckets(2);
        for (int i = 1; i <= 5; i++) {
            int bucket = buckets.bucketOf(i * 100);
            histograms.beginInterval(i * 1000, i * 1000 + 1000);
            histograms.addBuckets("tpot", buckets, new int[] {bucket}, new long[] {1}, 1, buckets.highestValueOf(bucket));
        }
        histograms.addBuckets("op:blk.1 attention,x", buckets, new int[0], new long[0], 0, 0); // empty: skipped
        List<Histogram> kept = histograms.copy().get("tpot").stream().map(IntervalHistograms.Encoded::decode)
                .toList();
        assertEquals(3, kept.size(), "base + the last 2");
        assertEquals(3, kept.getFirst().getTotalCount(), "intervals 1..3 folded");
        assertEquals(1000, kept.getFirst().getStartTimeStamp());
        assertEquals(4000, kept.getFirst().getEndTimeStamp());
        assertEquals(5, kept.stream().mapToLong(Histogram::getTotalCount).sum());
        assertEquals(List.of("tpot"), List.copyOf(histograms.copy().keySet()));
        assertEquals("op:blk.1_attention_x", IntervalHistograms.logTag("op:blk.1 attention,x"));
    }
}
