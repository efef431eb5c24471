package dev.infertop.event;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.infertop.event.EventLayout.*;

/**
 * Ring-buffer records as the BPF side could write them after a layout mismatch, or as a corrupted ring would
 * hand them over: the decoder must count what it cannot decode, and every range it hands a listener
 * (batch tokens, arrival times, counter deltas, backend op counts, MoE ids) must lie inside the record. The
 * record is its own segment here, so a read past its end throws instead of reading the ring's next record.
 */
class EventDecoderFuzzTest {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Reads every byte the decoder promised, as the aggregators would. */
    private static final class TouchingListener implements TraceListener {
        long sum;

        @Override
        public void onDecode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {
            sum += nTokens;
        }

        @Override
        public void onBatch(int tid, long startNs, long endNs, long contextAddress, int nTokens, BatchTokens tokens) {
            for (int t = 0; t < tokens.count(); t++) {
                sum += tokens.position(t) + tokens.sequence(t) + tokens.logits(t) + tokens.sequenceCount(t);
            }
        }

        @Override
        public void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh,
                                   long guidLow, int nNodes, int status) {
            sum += nNodes;
        }

        @Override
        public void onCpuGraphCompute(int tid, long startNs, long endNs, long cgraphAddress, int nNodes, int status) {
            sum += nNodes;
        }

        @Override
        public void onNode(long graphSeq, long graphStartNs, int index, int nNodes, long tensor, int op, int type,
                           int flags, int opParam0, long ne0, long ne1, long ne2, long ne3, long src0, long src1,
                           long src2, int nameId) {
            sum += nameId;
        }

        @Override
        public void onGraphSame(long graphSeq, long sameAsSeq, long timeNs) {
            sum += sameAsSeq;
        }

        @Override
        public void onArrivals(int tid, long graphSeq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                               ArrivalTimes arrivals) {
            for (int k = 0; k < arrivals.count(); k++) {
                sum += arrivals.at(k);
            }
        }

        @Override
        public void onFused(int tid, long graphSeq, int seq, long tensor, long nextTensor, long timeNs) {
            sum += seq;
        }

        @Override
        public void onCounters(int tid, long graphSeq, CounterDeltas record) {
            long[] deltas = new long[record.groups() * CounterDeltas.EVENTS];
            record.copyDeltasTo(deltas);
            int[] bits = new int[CounterDeltas.GROUP_BIT_INTS];
            record.copyMigratedBitsTo(bits);
            record.copySwitchedBitsTo(bits);
            for (long delta : deltas) {
                sum += delta;
            }
            sum += record.enabledNs(0) + record.runningNs(CounterDeltas.EVENTS - 1) + record.failedReads() + bits[0];
        }

        @Override
        public void onBackendOps(int tid, long startNs, long backendAddress, long guidHigh, long guidLow,
                                 int nNodes, int counted, OpCounts nodes) {
            for (int slot = 0; slot < nodes.size(); slot++) {
                sum += nodes.at(slot);
            }
        }

        @Override
        public void onMoe(int tid, long timeNs, long graphSeq, long signature, int subtype, int group, int value,
                          int layer, long ne0, long ne1, long nb1, boolean failed, ExpertIds ids) {
            for (int b = 0; b < ids.bytes(); b++) {
                sum += ids.byteAt(b);
            }
        }
    }

    private static final TouchingListener LISTENER = new TouchingListener();
    private static final EventDecoder DECODER = new EventDecoder(LISTENER, new NameTable());

    @FuzzTest(maxDuration = "10s")
    void decode(byte[] record) {
        long before = DECODER.malformedRecords();
        DECODER.onRecord(MemorySegment.ofArray(record), 0, record.length);
        if (DECODER.malformedRecords() < before) {
            throw new AssertionError("the malformed count went down");
        }
    }
}
