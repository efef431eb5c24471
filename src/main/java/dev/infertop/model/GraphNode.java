package dev.infertop.model;

import java.util.List;

/**
 * One node of a traced graph, as the operator layer read it: its tensor address, op, name, shape, the
 * addresses of its first three sources (and, for sources outside the graph, their names when they could be
 * read), and the wall time measured for it (0 for nodes the CPU loop skips:
 * views, reshapes, and nodes not flagged for compute). A fused group's time is shared evenly by its nodes.
 */
public record GraphNode(int index, long tensor, String op, String name, List<Long> shape, List<Long> sources,
                        long timeNs, boolean executed, List<String> sourceNames) {
    public GraphNode {
        shape = List.copyOf(shape);
        sources = List.copyOf(sources);
        sourceNames = List.copyOf(sourceNames);
    }

    /** Without source names (sources outside the graph are then known by address only). */
    public GraphNode(int index, long tensor, String op, String name, List<Long> shape, List<Long> sources,
                     long timeNs, boolean executed) {
        this(index, tensor, op, name, shape, sources, timeNs, executed, List.of());
    }

    /** The name of source {@code i} as read from the target, or "" when not read. */
    public String sourceName(int i) {
        return i < sourceNames.size() ? sourceNames.get(i) : "";
    }

    /** The shape as ggml prints it: [ne0,ne1,ne2,ne3]. */
    public String shapeText() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < shape.size(); i++) {
            text.append(i == 0 ? "" : ",").append(shape.get(i));
        }
        return text.append(']').toString();
    }
}
