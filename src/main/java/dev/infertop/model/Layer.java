package dev.infertop.model;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The probe layers a user can switch on and off (ProfInfer's token / graph / operator / ... layers), each described
 * once: what it records and the JSON objects its figures fill. Its other parts are registered once per package,
 * keyed by the layer: its probes and kernel side in {@code bpf.ProbeLayer}, its aggregators where
 * {@code session.Pipeline} builds the trace aggregator, its panels in {@code view.BodyPanel}; LayerRegistrationTest
 * fails for a layer one of them misses. The man page's Layers list says the same (LayerDescriptionTest holds the
 * two together).
 */
public enum Layer {
    TOKEN("llama_decode entry/exit: tokens, TTFT, TPOT, tokens/s",
            JsonSchema.TTFT_MS, JsonSchema.TPOT_MS, JsonSchema.REQUESTS, JsonSchema.SPECULATIVE, JsonSchema.BATCH_SIZES,
            JsonSchema.GRAPH_TOKENS, JsonSchema.WHISPER),
    GRAPH("graph computes per backend: ggml_backend_graph_compute_async, ggml_graph_compute; device completion "
            + "at ggml_backend_synchronize, copies between backends",
            JsonSchema.GRAPH_COMPUTES, JsonSchema.GRAPH_NODES, JsonSchema.GRAPH_BUSY_MS, JsonSchema.BACKENDS,
            JsonSchema.OFFLOAD),
    OPERATOR("every CPU graph node on every thread: op, tensor, shape, work and barrier wait",
            JsonSchema.OPS, JsonSchema.THREADS, JsonSchema.ROOFLINE, JsonSchema.OPS_ESTIMATED, JsonSchema.OPS_SAMPLED),
    SCHED("sched_switch/sched_wakeup tracepoints: thread states (running, runnable, sleeping) and who ran "
            + "on the CPU while a thread waited for it", JsonSchema.SCHED),
    COUNTERS("perf counters per CPU read at each node group's barrier: per op counts, IPC, L3 refill bandwidth",
            JsonSchema.COUNTERS),
    MOE("MoE experts: the expert ids of every token from every MUL_MAT_ID node (needs the operator layer)",
            JsonSchema.MOE);

    private final String description;
    private final java.util.List<String> jsonSections;

    Layer(String description, JsonSchema... jsonSections) {
        this.description = description;
        this.jsonSections = Arrays.stream(jsonSections).map(JsonSchema::key).toList();
    }

    /** The objects of a JSON line (and of a snapshot's summary) that hold this layer's figures. */
    public java.util.List<String> jsonSections() {
        return jsonSections;
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public String description() {
        return description;
    }

    public static Layer parse(String id) {
        for (Layer layer : values()) {
            if (layer.id().equals(id.strip().toLowerCase(Locale.ROOT))) {
                return layer;
            }
        }
        throw new IllegalArgumentException("unknown layer '" + id + "': choose from "
                + Arrays.stream(values()).map(Layer::id).collect(Collectors.joining(", ")));
    }
}
