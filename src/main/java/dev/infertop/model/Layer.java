package dev.infertop.model;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The probe layers a user can switch on and off (ProfInfer's token / graph / operator / ... layers). */
public enum Layer {
    TOKEN("llama_decode entry/exit: tokens, TTFT, TPOT, tokens/s"),
    GRAPH("graph computes per backend: ggml_backend_graph_compute_async, ggml_graph_compute"),
    OPERATOR("every CPU graph node on every thread: op, tensor, shape, work and barrier wait"),
    SCHED("sched_switch/sched_wakeup tracepoints: thread states (running, runnable, sleeping) and who ran "
            + "on the CPU while a thread waited for it"),
    COUNTERS("perf counters per CPU read at each node group's barrier: per op counts, IPC, L3 refill bandwidth"),
    MOE("MoE experts: the expert ids of every token from every MUL_MAT_ID node (needs the operator layer)");

    private final String description;

    Layer(String description) {
        this.description = description;
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
