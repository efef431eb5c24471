package dev.infertop.event;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static dev.infertop.event.EventLayout.*;

/**
 * Writes probe records exactly as the BPF programs lay them out in the ring buffer (native/events.h, through
 * {@link EventLayout}) into native memory, and hands each to a {@link RecordHandler}: the
 * decoder sees the bytes it would see from the kernel. Used to run the collector's code before the target
 * does (see {@code CollectorWarmup}). One record at a time; not thread-safe.
 */
public final class RecordWriter implements AutoCloseable {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfLong LONG_BIG_ENDIAN = LONG.withOrder(java.nio.ByteOrder.BIG_ENDIAN);

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment record = arena.allocate(ARRIVALS_TS + 8L * MAX_ARRIVALS, 8);
    private final RecordHandler handler;

    public RecordWriter(RecordHandler handler) {
        this.handler = handler;
    }

    private void header(int kind, int tid, long startNs, long endNs) {
        record.set(INT, HEADER_KIND, kind);
        record.set(INT, HEADER_TID, tid);
        record.set(LONG, HEADER_START_NS, startNs);
        record.set(LONG, HEADER_END_NS, endNs);
    }

    /** One llama_decode call of {@code nTokens} tokens. */
    public void decode(int tid, long startNs, long endNs, long context, int nTokens) {
        header(EVENT_DECODE, tid, startNs, endNs);
        record.set(LONG, DECODE_CTX, context);
        record.set(INT, DECODE_N_TOKENS, nTokens);
        record.set(INT, DECODE_RET, 0);
        handler.onRecord(record, 0, DECODE_SIZE);
    }

    /** One llama_process(ENCODE) call of {@code nTokens} tokens: a decode_event of its own kind. */
    public void encode(int tid, long startNs, long endNs, long context, int nTokens, int status) {
        header(EVENT_ENCODE, tid, startNs, endNs);
        record.set(LONG, DECODE_CTX, context);
        record.set(INT, DECODE_N_TOKENS, nTokens);
        record.set(INT, DECODE_RET, status);
        handler.onRecord(record, 0, DECODE_SIZE);
    }

    /** One backend graph compute; the GUID as two big-endian halves, as the probe copies its 16 bytes. */
    public void graph(int tid, long startNs, long endNs, long backend, long guidHigh, long guidLow, int nNodes) {
        header(EVENT_GRAPH, tid, startNs, endNs);
        record.set(LONG, GRAPH_BACKEND, backend);
        record.set(LONG_BIG_ENDIAN, GRAPH_GUID, guidHigh);
        record.set(LONG_BIG_ENDIAN, GRAPH_GUID + 8, guidLow);
        record.set(INT, GRAPH_N_NODES, nNodes);
        record.set(INT, GRAPH_RET, 0);
        handler.onRecord(record, 0, GRAPH_SIZE);
    }

    /** One ggml_graph_compute call. */
    public void cpuGraph(int tid, long startNs, long endNs, long cgraph, int nNodes) {
        header(EVENT_CPU_GRAPH, tid, startNs, endNs);
        record.set(LONG, CPU_GRAPH_CGRAPH, cgraph);
        record.set(INT, CPU_GRAPH_N_NODES, nNodes);
        record.set(INT, CPU_GRAPH_RET, 0);
        handler.onRecord(record, 0, CPU_GRAPH_SIZE);
    }

    /** One graph node as the graph walk reads it; {@code ne} and {@code src} up to 4 and 3 values. */
    public void node(long graphSeq, long graphStartNs, int index, int nNodes, long tensor, int op, int type, int flags,
                     int opParam0, long[] ne, long[] src, String name) {
        header(EVENT_NODE, 0, graphStartNs, 0);
        record.set(LONG, NODE_GRAPH_SEQ, graphSeq);
        record.set(LONG, NODE_TENSOR, tensor);
        for (int i = 0; i < 3; i++) {
            record.set(LONG, NODE_SRC + 8L * i, i < src.length ? src[i] : 0);
        }
        for (int i = 0; i < 4; i++) {
            record.set(LONG, NODE_NE + 8L * i, i < ne.length ? ne[i] : 1);
        }
        record.set(INT, NODE_INDEX, index);
        record.set(INT, NODE_N_NODES, nNodes);
        record.set(INT, NODE_OP, op);
        record.set(INT, NODE_TYPE, type);
        record.set(INT, NODE_FLAGS, flags);
        record.set(INT, NODE_OP_PARAM0, opParam0);
        byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        int length = Math.min(bytes.length, NODE_NAME_BYTES - 1);
        MemorySegment.copy(bytes, 0, record, ValueLayout.JAVA_BYTE, NODE_NAME, length);
        record.asSlice(NODE_NAME + length, NODE_NAME_BYTES - length).fill((byte) 0);
        handler.onRecord(record, 0, NODE_SIZE);
    }

    /** Graph {@code graphSeq} has the nodes of graph {@code sameAsSeq}: not read again. */
    public void graphSame(long graphSeq, long sameAsSeq, long timeNs) {
        header(EVENT_GRAPH_SAME, 0, timeNs, 0);
        record.set(LONG, THREAD_GRAPH_SEQ, graphSeq);
        record.set(INT, THREAD_CPU, 0);
        record.set(INT, THREAD_SEQ, 0);
        record.set(LONG, THREAD_TENSOR, sameAsSeq);
        record.set(LONG, THREAD_TENSOR2, 0);
        handler.onRecord(record, 0, THREAD_SIZE);
    }

    /** A fused op call: node group {@code group} (1-based) runs {@code tensor} and {@code nextTensor}. */
    public void fused(int tid, long graphSeq, int group, long tensor, long nextTensor, long timeNs) {
        header(EVENT_FUSED, tid, timeNs, 0);
        record.set(LONG, THREAD_GRAPH_SEQ, graphSeq);
        record.set(INT, THREAD_CPU, 0);
        record.set(INT, THREAD_SEQ, group);
        record.set(LONG, THREAD_TENSOR, tensor);
        record.set(LONG, THREAD_TENSOR2, nextTensor);
        handler.onRecord(record, 0, THREAD_SIZE);
    }

    /** One thread's barrier arrivals over a graph: {@code count} of {@code timesNs}. */
    public void arrivals(int tid, long graphSeq, long startNs, int cpu, long[] timesNs, int count) {
        if (count > MAX_ARRIVALS) {
            throw new IllegalArgumentException("at most " + MAX_ARRIVALS + " arrivals, got " + count);
        }
        header(EVENT_ARRIVALS, tid, startNs, count == 0 ? startNs : timesNs[count - 1]);
        record.set(LONG, ARRIVALS_GRAPH_SEQ, graphSeq);
        record.set(INT, ARRIVALS_COUNT, count);
        record.set(INT, ARRIVALS_CPU_FIRST, cpu);
        record.set(INT, ARRIVALS_CPU_LAST, cpu);
        record.set(INT, ARRIVALS_MIGRATED, 0);
        MemorySegment.copy(timesNs, 0, record, LONG, ARRIVALS_TS, count);
        handler.onRecord(record, 0, ARRIVALS_TS + 8 * count);
    }

    @Override
    public void close() {
        arena.close();
    }
}
