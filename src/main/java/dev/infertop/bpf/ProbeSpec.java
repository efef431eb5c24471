package dev.infertop.bpf;

import dev.infertop.model.Layer;

import java.util.List;
import java.util.function.Predicate;

/** One place infertop probes, and the BPF program(s) run there. The list below is every probe of every layer. */
public sealed interface ProbeSpec {
    Layer layer();

    /** Whether the layer is still useful without this probe. */
    boolean optional();

    /** A function's entry (and, with {@code exitProgram}, its return). {@code clones}: also name.isra.0 etc. */
    record FunctionProbe(Layer layer, String symbol, String entryProgram, String exitProgram, boolean clones,
                         boolean optional) implements ProbeSpec {}

    /**
     * Call instructions inside {@code caller} (and its clones) whose callee's name matches: all of them, or,
     * with {@code nodeLoopOnly}, those the graph node loop itself makes ({@link dev.infertop.process.NodeLoopBarriers}).
     */
    record CallSiteProbe(Layer layer, String caller, String calleeDescription, Predicate<String> callee,
                         boolean nodeLoopOnly, String program, boolean optional) implements ProbeSpec {}

    /**
     * A kernel tracepoint program (tp_btf/...): attached once, machine-wide, by its section name; it filters
     * the target process itself. No library is involved.
     */
    record TracepointProbe(Layer layer, String tracepoint, String program, boolean optional) implements ProbeSpec {}

    /**
     * The fused-op calls' program: optional, and left unprobed where the fused groups can be worked out from
     * the graph (OperatorKernelSide.inferFusedCalls) unless the MoE layer needs them.
     */
    String FUSED_CALL_PROGRAM = "handle_fused_call";

    /** static bool ggml_backend_vk_cpy_tensor_async(ggml_backend_t, ggml_backend_t, const ggml_tensor *, ggml_tensor *) */
    String VULKAN_COPY_ASYNC = "_ZL32ggml_backend_vk_cpy_tensor_asyncP12ggml_backendS0_PK11ggml_tensorPS1_";
    /** void ggml_vk_submit(vk_context &, vk::Fence) */
    String VULKAN_SUBMIT = "_Z14ggml_vk_submitRSt10shared_ptrI17vk_context_structEN2vk5FenceE";
    /** void ggml_vk_wait_for_fence(ggml_backend_vk_context *) */
    String VULKAN_FENCE_WAIT = "_Z22ggml_vk_wait_for_fenceP23ggml_backend_vk_context";
    /** static ggml_status ggml_backend_vk_graph_compute(ggml_backend_t, ggml_cgraph *) */
    String VULKAN_GRAPH_COMPUTE = "_ZL29ggml_backend_vk_graph_computeP12ggml_backendP11ggml_cgraph";
    /** bool ggml_vk_build_graph(ggml_backend_vk_context *, ggml_cgraph *, int node_idx, ggml_tensor *, int, bool, bool, bool) */
    String VULKAN_BUILD_GRAPH_PREFIX = "_Z19ggml_vk_build_graphP23ggml_backend_vk_context";
    /** The device backends' node-by-node host dispatch: per-node, so switched with the operator layer's windows. */
    String NODE_DISPATCH_PROGRAM = "handle_vk_record";
    /** static bool ggml_backend_cuda_cpy_tensor_async(ggml_backend_t, ggml_backend_t, const ggml_tensor *, ggml_tensor *) */
    String CUDA_COPY_ASYNC = "_ZL34ggml_backend_cuda_cpy_tensor_asyncP12ggml_backendS0_PK11ggml_tensorPS1_";

    List<ProbeSpec> ALL = List.of(
            // The token layer's two entry points: llama_decode(ctx, struct llama_batch) in every release, and
            // llama_process(ctx, type, struct llama_batch_ext *) in newer ones, whose tools call only that. Each
            // is optional; a library needs one of them (TOKEN_ENTRY_POINTS). A call goes through exactly one.
            new FunctionProbe(Layer.TOKEN, "llama_decode", "handle_decode_enter", "handle_decode_exit", false, true),
            new FunctionProbe(Layer.TOKEN, "llama_process", "handle_process_enter", "handle_process_exit", false,
                    true),
            // llama_process's batch is an opaque C++ object: its tokens are followed through the C builders.
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_init", "handle_ext_init_enter", "handle_ext_init_exit",
                    false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_clear", "handle_ext_clear", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_free", "handle_ext_free", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_add", "handle_ext_add", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_add_token", "handle_ext_add", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_add_embd", "handle_ext_add", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_add_seq", "handle_ext_add_seq", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_set_pos", "handle_ext_set_pos", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_set_output_logits", "handle_ext_set_output", null,
                    false, true),
            new FunctionProbe(Layer.TOKEN, "llama_batch_ext_set_output_embd", "handle_ext_set_output", null, false,
                    true),
            // A speculative verification's kept drafts: the server removes the rejected ones right after it. The
            // function's name changed twice; a release has one of the three.
            new FunctionProbe(Layer.TOKEN, "llama_memory_seq_rm", "handle_seq_rm", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_kv_self_seq_rm", "handle_seq_rm", null, false, true),
            new FunctionProbe(Layer.TOKEN, "llama_kv_cache_seq_rm", "handle_seq_rm", null, false, true),
            // whisper.cpp's transcription call (whisper_full calls it, as whisper_full_parallel's threads do) and the
            // mel spectrogram it computes first, whose argument is the audio's length: whisper's audio seconds and
            // real-time factor (whisper.bpf.h); its encoder passes and decoder tokens come from its graphs. Both are
            // exported and entered through the PLT; the encoder and decoder themselves are static.
            new FunctionProbe(Layer.TOKEN, "whisper_full_with_state", "handle_whisper_full_enter",
                    "handle_whisper_full_exit", false, true),
            new FunctionProbe(Layer.TOKEN, "whisper_pcm_to_mel_with_state", "handle_whisper_mel_enter", null, false,
                    true),
            // The scheduler's whole graph, before its split among backends: where an engine that drives ggml's
            // scheduler itself (Ollama's) and llama.cpp both compute. The graph's tokens are read here, else at
            // the backend's or the CPU's own call below, once per graph (graph_tokens.bpf.h); only
            // ggml_backend_sched_graph_compute's callers reach it without a call to this one.
            new FunctionProbe(Layer.GRAPH, "ggml_backend_sched_graph_compute_async", "handle_sched_graph_enter",
                    "handle_sched_graph_exit", false, true),
            new FunctionProbe(Layer.GRAPH, "ggml_backend_graph_compute_async", "handle_graph_enter",
                    "handle_graph_exit", false, false),
            new FunctionProbe(Layer.GRAPH, "ggml_graph_compute", "handle_cpu_graph_enter", "handle_cpu_graph_exit",
                    false, false),
            // Offload (native/offload.bpf.h): a device backend's compute call returns once its work is queued; its
            // work is complete when the host's next synchronize of it returns. The scheduler's input copies say
            // what crossed between backends. Exported by libggml-base; each optional (completion then unseen).
            new FunctionProbe(Layer.GRAPH, "ggml_backend_synchronize", "handle_sync_enter", "handle_sync_exit",
                    false, true),
            new FunctionProbe(Layer.GRAPH, "ggml_backend_event_synchronize", "handle_event_sync_enter",
                    "handle_sync_exit", false, true),
            new FunctionProbe(Layer.GRAPH, "ggml_backend_tensor_copy", "handle_copy_enter", "handle_copy_exit",
                    false, true),
            new FunctionProbe(Layer.GRAPH, "ggml_backend_tensor_copy_async", "handle_copy_async_enter",
                    "handle_copy_exit", false, true),
            // The scheduler's async input copies go through the device backend's interface, to these static
            // functions (in .symtab of unstripped builds: the npm packages'); each returns false when it cannot.
            new FunctionProbe(Layer.GRAPH, VULKAN_COPY_ASYNC, "handle_copy_async_enter", "handle_copy_iface_exit",
                    false, true),
            new FunctionProbe(Layer.GRAPH, CUDA_COPY_ASYNC, "handle_copy_async_enter", "handle_copy_iface_exit",
                    false, true),
            // The Vulkan backend's host dispatch in its own code: a submit per batch of recorded nodes,
            // and its waits for its own fence (host time, not device time).
            new FunctionProbe(Layer.GRAPH, VULKAN_SUBMIT, "handle_vk_submit_enter", "handle_dispatch_exit", false,
                    true),
            new FunctionProbe(Layer.GRAPH, VULKAN_FENCE_WAIT, "handle_vk_fence_enter", "handle_dispatch_exit", false,
                    true),
            // Operator layer: the graph is read once per compute; threads report only at the node-loop barrier.
            new FunctionProbe(Layer.OPERATOR, "ggml_graph_compute", "handle_graph_walk", "handle_graph_done", false,
                    false),
            new FunctionProbe(Layer.OPERATOR, "ggml_graph_compute_thread", "handle_thread_start", null, true, false),
            // The node loop calls ggml_barrier after each node and once after the loop; other call sites belong
            // to op code inlined into the loop (MoE's mul_mat_id) and are left alone. Which are which is read from
            // the code's shape (NodeLoopBarriers); were that ever wrong, graphs show up as unattributed.
            // Before ggml's backend split (b3995) ggml_barrier was static: an OpenMP build inlines it, and the
            // loop then calls libgomp's GOMP_barrier (`#pragma omp barrier`) itself, skipped with one thread.
            new CallSiteProbe(Layer.OPERATOR, "ggml_graph_compute_thread", "ggml_barrier",
                    name -> name.equals("ggml_barrier") || name.equals("GOMP_barrier"), true, "handle_node_done",
                    false),
            new CallSiteProbe(Layer.OPERATOR, "ggml_graph_compute_thread", "fused ops",
                    name -> name.startsWith("ggml_compute_forward_") && name.contains("_fused"), false,
                    FUSED_CALL_PROGRAM, true),
            // A device backend's host dispatch, node by node: the Vulkan backend's graph compute records each node
            // it dispatches with a call (static, in the .symtab of unstripped builds), and skips the nodes a fused
            // dispatch computes. Per node, so a per-thread probe of this layer: only in its windows.
            new CallSiteProbe(Layer.OPERATOR, VULKAN_GRAPH_COMPUTE, "ggml_vk_build_graph",
                    name -> name.startsWith(VULKAN_BUILD_GRAPH_PREFIX) && !name.contains("."), false,
                    NODE_DISPATCH_PROGRAM, true),
            // MoE layer: experts computed on a device from host memory (-ot exps=CPU): the scheduler reads their ids
            // back into a host buffer first (exported by libggml-base), complete at the synchronize that follows.
            new FunctionProbe(Layer.MOE, "ggml_backend_tensor_get_async", "handle_moe_get_async", null, false, true),
            // Sched layer: every context switch and wake-up on the machine, filtered to the target in the kernel.
            new TracepointProbe(Layer.SCHED, "sched_switch", "handle_sched_switch", false),
            new TracepointProbe(Layer.SCHED, "sched_wakeup", "handle_sched_wakeup", false));

    /**
     * Groups of optional function probes of which their layer needs at least one: without any of them the layer
     * reports nothing (neither a libllama exporting llama_decode or llama_process nor a libwhisper exporting
     * whisper_full_with_state).
     */
    List<List<String>> ONE_OF = List.of(List.of("llama_decode", "llama_process", "whisper_full_with_state"));

    static List<ProbeSpec> of(Layer layer) {
        return ALL.stream().filter(spec -> spec.layer() == layer).toList();
    }
}
