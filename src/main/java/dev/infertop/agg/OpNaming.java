package dev.infertop.agg;

import dev.infertop.agg.graph.NodeNaming;

/** What the operator layer needs to know about the target's ggml (the CPU graph's {@link NodeNaming}). */
public interface OpNaming extends NodeNaming {
}
