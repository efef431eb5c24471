package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static dev.infertop.event.EventLayout.*;

/** Turns ring-buffer records into {@link TraceListener} calls, reading fields in place (no allocation). */
public final class EventDecoder implements RecordHandler {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfLong LONG_BIG_ENDIAN = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Per record kind, the listener that takes it ({@link TraceListener#listenerFor}), fixed when made. */
    private final TraceListener[] listeners = new TraceListener[MAX_EVENT_KIND + 1];
    private final NameTable names;
    private final GraphTokensRecord graphTokens = new GraphTokensRecord();
    // The payloads' views, refilled for each record: a record costs no allocation.
    private final ArrivalTimes arrivalTimes = new ArrivalTimes();
    private final BatchTokens batchTokens = new BatchTokens();
    private final CounterDeltas counterDeltas = new CounterDeltas();
    private final ExpertIds expertIds = new ExpertIds();
    private final OpCounts opNodes = new OpCounts();
    private final OpCounts opCalls = new OpCounts();
    private final OpCounts opFused = new OpCounts();
    private long malformedRecords;

    public EventDecoder(TraceListener listener, NameTable names) {
        for (int kind = 0; kind <= MAX_EVENT_KIND; kind++) {
            listeners[kind] = listener.listenerFor(kind);
        }
        this.names = names;
    }

    /**
     * Reads the header and hands the record to its kind's method. One method per kind, not one switch reading every
     * field: each field read inlines the memory-access chain, and C1 compiling all of them as one method took more
     * native memory (glibc keeps it resident after) than the rest of infertop's compilations together.
     */
    @Override
    public void onRecord(MemorySegment data, long offset, int lengthBytes) {
        if (lengthBytes < HEADER_SIZE) {
            malformedRecords++;
            return;
        }
        int kind = data.get(INT, offset + HEADER_KIND);
        int tid = data.get(INT, offset + HEADER_TID);
        long startNs = data.get(LONG, offset + HEADER_START_NS);
        long endNs = data.get(LONG, offset + HEADER_END_NS);
        switch (kind) {
            case EVENT_DECODE, EVENT_ENCODE -> call(kind, data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_BATCH -> batch(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_SEQ_RM -> sequenceRemove(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_GRAPH -> graph(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_CPU_GRAPH -> cpuGraph(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_NODE -> node(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_ARRIVALS -> arrivals(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_FUSED, EVENT_GRAPH_SAME -> threadEvent(kind, data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_SCHED_OFF -> schedOff(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_SCHED_CULPRIT -> schedCulprit(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_COUNTERS -> counters(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_BACKEND_OPS -> backendOps(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_BACKEND_DISPATCH -> backendDispatch(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_MOE -> moe(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_OFFLOAD -> offload(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_GRAPH_TOKENS -> graphTokens(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_WHISPER_FULL -> whisperFull(data, offset, lengthBytes, tid, startNs, endNs);
            case EVENT_OP_SAMPLE -> opSample(data, offset, lengthBytes, tid, startNs);
            default -> malformedRecords++;
        }
    }

    /** A llama_decode or llama_process call: decode_event's layout for both kinds. */
    private void call(int kind, MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < DECODE_SIZE) {
            malformedRecords++;
            return;
        }
        long context = data.get(LONG, offset + DECODE_CTX);
        int nTokens = data.get(INT, offset + DECODE_N_TOKENS);
        int status = data.get(INT, offset + DECODE_RET);
        if (kind == EVENT_ENCODE) {
            listeners[EVENT_ENCODE].onEncode(tid, startNs, endNs, context, nTokens, status);
        } else {
            listeners[EVENT_DECODE].onDecode(tid, startNs, endNs, context, nTokens, status);
        }
    }

    private void batch(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < BATCH_TOKENS) {
            malformedRecords++;
            return;
        }
        int recorded = data.get(INT, offset + BATCH_RECORDED);
        if (recorded < 0 || recorded > MAX_BATCH_TOKENS
                || BATCH_TOKENS + (long) recorded * BATCH_TOKEN_SIZE > lengthBytes) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_BATCH].onBatch(tid, startNs, endNs, data.get(LONG, offset + BATCH_CTX),
                data.get(INT, offset + BATCH_N_TOKENS), batchTokens.wrap(data, offset + BATCH_TOKENS, recorded));
    }

    private void sequenceRemove(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < SEQ_RM_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_SEQ_RM].onSequenceRemove(tid, startNs, data.get(LONG, offset + SEQ_RM_MEMORY),
                data.get(INT, offset + SEQ_RM_SEQ), data.get(INT, offset + SEQ_RM_P0),
                data.get(INT, offset + SEQ_RM_P1));
    }

    private void graph(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < GRAPH_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_GRAPH].onGraphCompute(tid, startNs, endNs, data.get(LONG, offset + GRAPH_BACKEND),
                data.get(LONG_BIG_ENDIAN, offset + GRAPH_GUID), data.get(LONG_BIG_ENDIAN, offset + GRAPH_GUID + 8),
                data.get(INT, offset + GRAPH_N_NODES), data.get(INT, offset + GRAPH_RET));
    }

    private void cpuGraph(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < CPU_GRAPH_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_CPU_GRAPH].onCpuGraphCompute(tid, startNs, endNs, data.get(LONG, offset + CPU_GRAPH_CGRAPH),
                data.get(INT, offset + CPU_GRAPH_N_NODES), data.get(INT, offset + CPU_GRAPH_RET));
    }

    private void node(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < NODE_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_NODE].onNode(data.get(LONG, offset + NODE_GRAPH_SEQ), startNs,
                data.get(INT, offset + NODE_INDEX), data.get(INT, offset + NODE_N_NODES),
                data.get(LONG, offset + NODE_TENSOR),
                data.get(INT, offset + NODE_OP), data.get(INT, offset + NODE_TYPE),
                data.get(INT, offset + NODE_FLAGS), data.get(INT, offset + NODE_OP_PARAM0),
                data.get(LONG, offset + NODE_NE), data.get(LONG, offset + NODE_NE + 8),
                data.get(LONG, offset + NODE_NE + 16), data.get(LONG, offset + NODE_NE + 24),
                data.get(LONG, offset + NODE_SRC), data.get(LONG, offset + NODE_SRC + 8),
                data.get(LONG, offset + NODE_SRC + 16),
                names.intern(data, offset + NODE_NAME, NODE_NAME_BYTES));
    }

    private void arrivals(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        // The count is read only from a record long enough to hold it (found by EventDecoderFuzzTest).
        int count = lengthBytes < ARRIVALS_TS ? -1 : data.get(INT, offset + ARRIVALS_COUNT);
        if (count < 0 || count > MAX_ARRIVALS || lengthBytes < ARRIVALS_TS + 8L * count) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_ARRIVALS].onArrivals(tid, data.get(LONG, offset + ARRIVALS_GRAPH_SEQ), startNs,
                data.get(INT, offset + ARRIVALS_CPU_FIRST), data.get(INT, offset + ARRIVALS_CPU_LAST),
                data.get(INT, offset + ARRIVALS_MIGRATED) != 0, arrivalTimes.wrap(data, offset + ARRIVALS_TS, count));
    }

    private void threadEvent(int kind, MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < THREAD_SIZE) {
            malformedRecords++;
            return;
        }
        long graphSeq = data.get(LONG, offset + THREAD_GRAPH_SEQ);
        int cpu = data.get(INT, offset + THREAD_CPU);
        int seq = data.get(INT, offset + THREAD_SEQ);
        switch (kind) {
            case EVENT_GRAPH_SAME -> listeners[EVENT_GRAPH_SAME].onGraphSame(graphSeq,
                    data.get(LONG, offset + THREAD_TENSOR), startNs);
            default -> listeners[EVENT_FUSED].onFused(tid, graphSeq, seq, data.get(LONG, offset + THREAD_TENSOR),
                    data.get(LONG, offset + THREAD_TENSOR2), startNs);
        }
    }

    private void schedOff(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < SCHED_OFF_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_SCHED_OFF].onSchedOff(tid, startNs, endNs, data.get(LONG, offset + SCHED_OFF_WAKE_NS),
                data.get(LONG, offset + SCHED_OFF_RAN_NS), data.get(INT, offset + SCHED_OFF_CPU_OUT),
                data.get(INT, offset + SCHED_OFF_CPU_IN), data.get(INT, offset + SCHED_OFF_PREEMPTED) != 0);
    }

    private void schedCulprit(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < SCHED_CULPRIT_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_SCHED_CULPRIT].onSchedCulprit(tid, startNs, endNs, data.get(LONG, offset + SCHED_CULPRIT_NS),
                data.get(INT, offset + SCHED_CULPRIT_PID), data.get(INT, offset + SCHED_CULPRIT_TGID),
                data.get(INT, offset + SCHED_CULPRIT_CPU),
                names.intern(data, offset + SCHED_CULPRIT_COMM, SCHED_COMM_BYTES));
    }

    private void counters(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        int count = lengthBytes < COUNTERS_DELTA ? -1 : data.get(INT, offset + COUNTERS_COUNT);
        if (count < 0 || count > MAX_COUNTER_GROUPS
                || lengthBytes < COUNTERS_DELTA + 8L * MAX_COUNTER_EVENTS * count) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_COUNTERS].onCounters(tid, data.get(LONG, offset + COUNTERS_GRAPH_SEQ),
                counterDeltas.wrap(data, offset, count));
    }

    private void backendOps(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < BACKEND_OPS_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_BACKEND_OPS].onBackendOps(tid, startNs, data.get(LONG, offset + BACKEND_OPS_BACKEND),
                data.get(LONG_BIG_ENDIAN, offset + BACKEND_OPS_GUID),
                data.get(LONG_BIG_ENDIAN, offset + BACKEND_OPS_GUID + 8),
                data.get(INT, offset + BACKEND_OPS_N_NODES), data.get(INT, offset + BACKEND_OPS_COUNTED),
                opNodes.wrap(data, offset + BACKEND_OPS_OP_NODES));
    }

    private void backendDispatch(MemorySegment data, long offset, int lengthBytes, int tid, long startNs,
                                 long endNs) {
        if (lengthBytes < BACKEND_DISPATCH_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_BACKEND_DISPATCH].onBackendDispatch(tid, startNs, endNs,
                data.get(LONG_BIG_ENDIAN, offset + BACKEND_DISPATCH_GUID),
                data.get(LONG_BIG_ENDIAN, offset + BACKEND_DISPATCH_GUID + 8),
                data.get(INT, offset + BACKEND_DISPATCH_N_NODES), data.get(INT, offset + BACKEND_DISPATCH_CALLS),
                opCalls.wrap(data, offset + BACKEND_DISPATCH_OP_CALLS),
                opFused.wrap(data, offset + BACKEND_DISPATCH_OP_FUSED));
    }

    /** A synchronize (the backend waited for) or a tensor copy (its source's shape, bytes and both names). */
    private void offload(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < OFFLOAD_SIZE) {
            malformedRecords++;
            return;
        }
        int what = data.get(INT, offset + OFFLOAD_WHAT);
        TraceListener listener = listeners[EVENT_OFFLOAD];
        long backend = data.get(LONG, offset + OFFLOAD_BACKEND);
        long guidHigh = data.get(LONG_BIG_ENDIAN, offset + OFFLOAD_GUID);
        long guidLow = data.get(LONG_BIG_ENDIAN, offset + OFFLOAD_GUID + 8);
        switch (what) {
            case OFFLOAD_SYNC, OFFLOAD_EVENT_SYNC -> listener.onBackendWait(tid, startNs, endNs,
                    what == OFFLOAD_SYNC ? backend : 0, guidHigh, guidLow);
            case OFFLOAD_COPY, OFFLOAD_COPY_ASYNC -> listener.onTensorCopy(tid, startNs, endNs,
                    what == OFFLOAD_COPY_ASYNC, data.get(LONG, offset + OFFLOAD_BYTES),
                    data.get(INT, offset + OFFLOAD_TYPE), data.get(LONG, offset + OFFLOAD_NE),
                    data.get(LONG, offset + OFFLOAD_NE + 8), data.get(LONG, offset + OFFLOAD_NE + 16),
                    data.get(LONG, offset + OFFLOAD_NE + 24),
                    names.intern(data, offset + OFFLOAD_SRC_NAME, OFFLOAD_NAME_BYTES),
                    names.intern(data, offset + OFFLOAD_DST_NAME, OFFLOAD_NAME_BYTES));
            case OFFLOAD_VK_SUBMIT, OFFLOAD_VK_FENCE -> listener.onHostDispatch(tid, startNs, endNs,
                    what == OFFLOAD_VK_FENCE);
            default -> malformedRecords++;
        }
    }

    private void moe(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        int value = lengthBytes < MOE_IDS_OFFSET ? -1 : data.get(INT, offset + MOE_VALUE);
        int subtype = value < 0 ? 0 : data.get(INT, offset + MOE_SUBTYPE);
        if (value < 0 || value > MOE_MAX_ID_BYTES
                || (subtype == MOE_IDS && lengthBytes < MOE_IDS_OFFSET + (long) value)) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_MOE].onMoe(tid, startNs, data.get(LONG, offset + MOE_GRAPH_SEQ),
                data.get(LONG, offset + MOE_SIGNATURE), subtype, data.get(INT, offset + MOE_GROUP), value,
                data.get(INT, offset + MOE_LAYER),
                data.get(LONG, offset + MOE_NE0), data.get(LONG, offset + MOE_NE1), data.get(LONG, offset + MOE_NB1),
                data.get(INT, offset + MOE_FAILED) != 0,
                expertIds.wrap(data, offset + MOE_IDS_OFFSET, subtype == MOE_IDS ? value : 0));
    }

    private void graphTokens(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (!graphTokens.read(data, offset, lengthBytes, tid, startNs, endNs)) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_GRAPH_TOKENS].onGraphTokens(graphTokens);
    }

    private void whisperFull(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < WHISPER_FULL_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_WHISPER_FULL].onWhisperFull(tid, startNs, endNs, data.get(INT, offset + WHISPER_FULL_N_SAMPLES),
                data.get(INT, offset + WHISPER_FULL_RET));
    }

    private void opSample(MemorySegment data, long offset, int lengthBytes, int tid, long timeNs) {
        if (lengthBytes < OP_SAMPLE_SIZE) {
            malformedRecords++;
            return;
        }
        listeners[EVENT_OP_SAMPLE].onOpSample(tid, timeNs, data.get(INT, offset + OP_SAMPLE_CPU),
                data.get(LONG, offset + OP_SAMPLE_IP));
    }

    /** Records with an unknown kind or a short length: a layout mismatch between native/ and Java. */
    public long malformedRecords() {
        return malformedRecords;
    }
}
