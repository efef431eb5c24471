package dev.infertop.event;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * llama_process(ENCODE) records: a struct decode_event of kind 16, written here byte by byte at the offsets of
 * native/events.h (header 24 bytes, ctx at 24, n_tokens at 32, ret at 36, 40 in all), so the test does not lean
 * on the constants it checks.
 */
class EventDecoderTest {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Every decode and encode call, as text, in arrival order. */
    private static final class CallLog implements TraceListener {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onDecode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {
            calls.add("decode " + tid + " " + startNs + " " + endNs + " 0x" + Long.toHexString(contextAddress) + " "
                    + nTokens + " " + status);
        }

        @Override
        public void onEncode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {
            calls.add("encode " + tid + " " + startNs + " " + endNs + " 0x" + Long.toHexString(contextAddress) + " "
                    + nTokens + " " + status);
        }

        @Override
        public void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh,
                                   long guidLow, int nNodes, int status) {
            calls.add("graph");
        }

        @Override
        public void onCpuGraphCompute(int tid, long startNs, long endNs, long cgraphAddress, int nNodes, int status) {
            calls.add("cpu graph");
        }

        @Override
        public void onNode(long graphSeq, long graphStartNs, int index, int nNodes, long tensor, int op, int type,
                           int flags, int opParam0, long ne0, long ne1, long ne2, long ne3, long src0, long src1,
                           long src2, int nameId) {
            calls.add("node");
        }

        @Override
        public void onGraphSame(long graphSeq, long sameAsSeq, long timeNs) {
            calls.add("same");
        }

        @Override
        public void onArrivals(int tid, long graphSeq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                               ArrivalTimes arrivals) {
            calls.add("arrivals");
        }

        @Override
        public void onFused(int tid, long graphSeq, int seq, long tensor, long nextTensor, long timeNs) {
            calls.add("fused");
        }
    }

    private final CallLog log = new CallLog();
    private final EventDecoder decoder = new EventDecoder(log, new NameTable());

    /** A decode_event record of {@code kind}, {@code lengthBytes} long (40 is the whole struct). */
    private static MemorySegment record(int kind, int lengthBytes) {
        MemorySegment record = MemorySegment.ofArray(new byte[40]);
        record.set(INT, 0, kind);
        record.set(INT, 4, 4711);                  // tid
        record.set(LONG, 8, 1_000_000L);           // start_ns
        record.set(LONG, 16, 3_500_000L);          // end_ns
        record.set(LONG, 24, 0x5a5a_0000_c0feL);   // ctx
        record.set(INT, 32, 37);                   // n_tokens
        record.set(INT, 36, -3);                   // ret
        return record.asSlice(0, lengthBytes);
    }

    @Test
    void anEncodeRecordReachesOnEncodeWithItsFields() {
        MemorySegment record = record(16, 40);
        decoder.onRecord(record, 0, 40);
        assertEquals(List.of("encode 4711 1000000 3500000 0x5a5a0000c0fe 37 -3"), log.calls);
        assertEquals(0, decoder.malformedRecords());
    }

    @Test
    void aDecodeRecordOfTheSameBytesStillReachesOnDecode() {
        decoder.onRecord(record(1, 40), 0, 40);
        assertEquals(List.of("decode 4711 1000000 3500000 0x5a5a0000c0fe 37 -3"), log.calls);
    }

    @Test
    void aShortEncodeRecordReachesNothingAndIsCountedMalformed() {
        decoder.onRecord(record(16, 39), 0, 39);
        decoder.onRecord(record(16, 24), 0, 24); // a header alone
        assertEquals(List.of(), log.calls);
        assertEquals(2, decoder.malformedRecords());
    }

    @Test
    void theRecordWritersEncodeRecordRoundTrips() {
        try (RecordWriter records = new RecordWriter(decoder)) {
            records.encode(9, 100, 250, 0xc0, 64, 0);
            records.encode(9, 300, 310, 0xc0, -1, 1);
            records.decode(9, 400, 420, 0xc0, 1);
        }
        assertEquals(List.of("encode 9 100 250 0xc0 64 0", "encode 9 300 310 0xc0 -1 1", "decode 9 400 420 0xc0 1 0"),
                log.calls);
        assertEquals(0, decoder.malformedRecords());
    }
}
