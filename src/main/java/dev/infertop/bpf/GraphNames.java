package dev.infertop.bpf;

import dev.infertop.model.GraphRuntimes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Writes the runtimes' descriptions ({@link GraphRuntimes}) into the `graph_names` map the graph probes name
 * tensors with (native/graph_tokens.bpf.h): one longest-prefix-match entry per name prefix, its value the kind and
 * the runtime. After load, before attach: this is the one path by which the descriptions reach the probes.
 */
public final class GraphNames {
    public static final String MAP = "graph_names";

    private GraphNames() {}

    public static void write(BpfObject object, GraphRuntimes runtimes) throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocate(ControlLayout.GRAPH_NAME_KEY_SIZE, 4);
            MemorySegment value = arena.allocate(ControlLayout.GRAPH_NAME_VALUE_SIZE, 4);
            for (GraphRuntimes.Name name : runtimes.names()) {
                byte[] prefix = name.prefix().getBytes(StandardCharsets.US_ASCII);
                key.fill((byte) 0);
                key.set(ValueLayout.JAVA_INT, ControlLayout.GRAPH_NAME_KEY_PREFIXLEN, prefix.length * 8);
                MemorySegment.copy(prefix, 0, key, ValueLayout.JAVA_BYTE, ControlLayout.GRAPH_NAME_KEY_NAME,
                        Math.min(prefix.length, ControlLayout.GRAPH_NAME_BYTES - 1));
                value.set(ValueLayout.JAVA_INT, ControlLayout.GRAPH_NAME_VALUE_KIND, name.kind().wire());
                value.set(ValueLayout.JAVA_INT, ControlLayout.GRAPH_NAME_VALUE_RUNTIME, name.runtime());
                object.updateElement(MAP, key, value);
            }
        }
    }
}
