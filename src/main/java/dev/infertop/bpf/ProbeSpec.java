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
            new FunctionProbe(Layer.GRAPH, "ggml_backend_graph_compute_async", "handle_graph_enter",
                    "handle_graph_exit", false, false),
            new FunctionProbe(Layer.GRAPH, "ggml_graph_compute", "handle_cpu_graph_enter", "handle_cpu_graph_exit",
                    false, false),
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
            // Sched layer: every context switch and wake-up on the machine, filtered to the target in the kernel.
            new TracepointProbe(Layer.SCHED, "sched_switch", "handle_sched_switch", false),
            new TracepointProbe(Layer.SCHED, "sched_wakeup", "handle_sched_wakeup", false));

    /**
     * Groups of optional function probes of which their layer needs at least one: without any of them the layer
     * reports nothing (a libllama exporting neither llama_decode nor llama_process).
     */
    List<List<String>> ONE_OF = List.of(List.of("llama_decode", "llama_process"));

    static List<ProbeSpec> of(Layer layer) {
        return ALL.stream().filter(spec -> spec.layer() == layer).toList();
    }
}
