package dev.infertop.event;

/**
 * Decoded probe records, one method per record kind, primitives only: the ring-buffer reader calls these
 * for every event, so implementations must not allocate per call. A kind no listener takes is ignored.
 */
public interface TraceListener {
    /**
     * The listener that takes the records of {@code kind} (an {@code EventLayout.EVENT_} constant): this one, unless
     * it hands a layer's records to that layer's own listener. A decoder asks once per kind when it is made, so a
     * record still costs one call and no lookup.
     */
    default TraceListener listenerFor(int kind) {
        return this;
    }

    /** One llama_decode call; nTokens 1 is a decode step, more is prefill; status is its return value. */
    default void onDecode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {}

    /**
     * One llama_process(LLAMA_PROCESS_TYPE_ENCODE) call (an encoder-decoder model's encoder pass): not a decode
     * call, so counted apart.
     */
    default void onEncode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {}

    /**
     * The batch of the llama_decode call whose {@link #onDecode} comes next on this thread (same start and end):
     * {@code tokens} the {@code tokens.count()} of its {@code nTokens} recorded (the decoder's view, valid during
     * the call only). Only for batches with per-token positions or sequences.
     */
    default void onBatch(int tid, long startNs, long endNs, long contextAddress, int nTokens, BatchTokens tokens) {}

    /**
     * A sequence's positions [{@code p0}, {@code p1}) were removed from a memory (llama_memory_seq_rm, or an
     * older release's kv seq_rm on a context): what a server does after a speculative verification to drop the
     * rejected drafts. Negative bounds are llama.cpp's "from the start" / "to the end".
     */
    default void onSequenceRemove(int tid, long timeNs, long memoryAddress, int seq, int p0, int p1) {}

    /**
     * One ggml_backend_graph_compute_async call. The backend's 16-byte GUID arrives as two big-endian longs
     * (bytes 0-7, 8-15) so it reads like the source's initialiser.
     */
    default void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow,
                        int nNodes, int status) {}

    /**
     * One graph whose tensor names a runtime's description knows (token layer, the graph source): its tokens,
     * positions, outputs and KV length. {@code graph} is the decoder's one view, valid during the call only.
     */
    default void onGraphTokens(GraphTokensRecord graph) {}

    /**
     * One whisper_full_with_state call (whisper.cpp's transcription of one buffer): {@code samples} of 16 kHz audio
     * as its whisper_pcm_to_mel_with_state call was given them, -1 when that call was not seen; its return value.
     */
    default void onWhisperFull(int tid, long startNs, long endNs, int samples, int status) {}

    /**
     * A target thread interrupted on {@code cpu} by the operator layer's clock sampler at {@code timeNs}, at user
     * address {@code ip} (0: it was in the kernel).
     */
    default void onOpSample(int tid, long timeNs, int cpu, long ip) {}

    /** One ggml_graph_compute call (the CPU backend's own entry). */
    default void onCpuGraphCompute(int tid, long startNs, long endNs, long cgraphAddress, int nNodes, int status) {}

    /**
     * One node of a CPU graph, read when the graph compute started (operator layer). {@code nameId} indexes
     * the decoder's {@link NameTable}, so names cost nothing after their first appearance.
     */
    default void onNode(long graphSeq, long graphStartNs, int index, int nNodes, long tensor, int op, int type, int flags,
                int opParam0, long ne0, long ne1, long ne2, long ne3, long src0, long src1, long src2, int nameId) {}

    /** Graph {@code graphSeq} has exactly the nodes of graph {@code sameAsSeq}, which were read; not read again. */
    default void onGraphSame(long graphSeq, long sameAsSeq, long timeNs) {}

    /**
     * One worker thread's walk through graph {@code graphSeq}: its start and, for each node group, when it
     * reached the barrier after it ({@code arrivals}: the decoder's view, read during the call only).
     */
    default void onArrivals(int tid, long graphSeq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                    ArrivalTimes arrivals) {}

    /** A worker thread runs a fused op: node group {@code seq} starts at {@code tensor}, then {@code nextTensor}. */
    default void onFused(int tid, long graphSeq, int seq, long tensor, long nextTensor, long timeNs) {}

    /**
     * Sched layer: target thread {@code tid} is back on CPU {@code cpuIn} at {@code onNs} after leaving CPU
     * {@code cpuOut} at {@code offNs}, having run {@code ranNs} before that. {@code preempted}: it stayed
     * runnable the whole time; otherwise it slept until {@code wakeNs} (0 when the wake-up was not seen).
     */
    default void onSchedOff(int tid, long offNs, long onNs, long wakeNs, long ranNs, int cpuOut, int cpuIn,
                            boolean preempted) {}

    /**
     * Sched layer: while thread {@code tid} waited for CPU {@code cpu} over [{@code waitStartNs},
     * {@code waitEndNs}], task {@code pid} of process {@code tgid} (named {@code commId} in the decoder's
     * {@link NameTable}) ran there for {@code ns}.
     */
    default void onSchedCulprit(int tid, long waitStartNs, long waitEndNs, long ns, int pid, int tgid, int cpu,
                                int commId) {}

    /**
     * One worker thread's counter deltas per node group over graph {@code graphSeq} (counters layer): the
     * decoder's view of the record, read during the call only.
     */
    default void onCounters(int tid, long graphSeq, CounterDeltas record) {}

    /**
     * A graph starts on a backend other than the CPU: {@code counted} of its {@code nNodes} nodes were read,
     * {@code nodes} their counts per op id (the decoder's view: read it during the call only). Its duration comes
     * with this thread's next {@link #onGraphCompute}.
     */
    default void onBackendOps(int tid, long startNs, long backendAddress, long guidHigh, long guidLow, int nNodes,
                              int counted, OpCounts nodes) {}

    /**
     * A device backend recorded one graph's nodes on the host, node by node, from {@code startNs} (its first
     * node) to {@code endNs} (the compute's return): per op, the nodes it was called for and the nodes an earlier
     * node's dispatch computed (fused), the decoder's views (read them during the call only). Sent just before
     * that compute's {@link #onGraphCompute}.
     */
    default void onBackendDispatch(int tid, long startNs, long endNs, long guidHigh, long guidLow, int nNodes,
                                   int calls, OpCounts opCalls, OpCounts opFused) {}

    /**
     * The host waited for a backend: ggml_backend_synchronize({@code backendAddress}) ran from {@code startNs}
     * to {@code endNs}; {@code backendAddress} 0 for ggml_backend_event_synchronize (an event names no backend).
     * A device backend's queued work is complete at its return.
     */
    default void onBackendWait(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow) {}

    /**
     * A tensor copied between backends' buffers (ggml_backend_tensor_copy, or its async form): {@code bytes} of a
     * tensor of {@code type} and shape {@code ne0..ne3}, named {@code srcNameId} and {@code dstNameId} (name ids
     * of the decoder's {@link NameTable}; the scheduler names an input's copy "BACKEND#name#N").
     */
    default void onTensorCopy(int tid, long startNs, long endNs, boolean async, long bytes, int type, long ne0,
                              long ne1, long ne2, long ne3, int srcNameId, int dstNameId) {}

    /**
     * The Vulkan backend dispatched from the host (in a compute or a synchronize): a submit of a batch of recorded nodes, or
     * ({@code fenceWait}) a wait for its own fence. Host time, never device time.
     */
    default void onHostDispatch(int tid, long startNs, long endNs, boolean fenceWait) {}

    /**
     * MoE layer: a traced graph started ({@code subtype} MOE_GRAPH: {@code value} 1 when BPF holds a plan for
     * its {@code signature}), or the ids tensor of planned node group {@code group} was copied (MOE_IDS:
     * {@code value} bytes in {@code ids}, the decoder's view, row t at t·nb1; read them during the call only).
     */
    default void onMoe(int tid, long timeNs, long graphSeq, long signature, int subtype, int group, int value,
                       int layer, long ne0, long ne1, long nb1, boolean failed, ExpertIds ids) {}
}
