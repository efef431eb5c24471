package dev.infertop.bpf;

import dev.infertop.model.Layer;

import java.util.List;

/**
 * One function infertop probes: its symbol, the BPF programs run at entry and return, and the layer it
 * belongs to. The table below is the whole token and graph layers.
 */
public record ProbeSpec(Layer layer, String symbol, String entryProgram, String exitProgram) {
    public static final List<ProbeSpec> ALL = List.of(
            new ProbeSpec(Layer.TOKEN, "llama_decode", "handle_decode_enter", "handle_decode_exit"),
            new ProbeSpec(Layer.GRAPH, "ggml_backend_graph_compute_async", "handle_graph_enter", "handle_graph_exit"),
            new ProbeSpec(Layer.GRAPH, "ggml_graph_compute", "handle_cpu_graph_enter", "handle_cpu_graph_exit"));

    public static List<ProbeSpec> of(Layer layer) {
        return ALL.stream().filter(spec -> spec.layer() == layer).toList();
    }
}
