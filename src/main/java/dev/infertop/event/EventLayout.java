package dev.infertop.event;

/**
 * Byte offsets of the records in native/events.h, mirrored by hand (no jextract here).
 * EventLayoutTest compiles events.h with the host C compiler and checks every number below.
 */
public final class EventLayout {
    private EventLayout() {}

    // enum event_kind
    public static final int EVENT_DECODE = 1;
    public static final int EVENT_GRAPH = 2;
    public static final int EVENT_CPU_GRAPH = 3;

    // struct event_header
    public static final int HEADER_KIND = 0;
    public static final int HEADER_TID = 4;
    public static final int HEADER_START_NS = 8;
    public static final int HEADER_END_NS = 16;
    public static final int HEADER_SIZE = 24;

    // struct decode_event
    public static final int DECODE_CTX = 24;
    public static final int DECODE_N_TOKENS = 32;
    public static final int DECODE_RET = 36;
    public static final int DECODE_SIZE = 40;

    // struct graph_event
    public static final int GRAPH_BACKEND = 24;
    public static final int GRAPH_GUID = 32;
    public static final int GRAPH_N_NODES = 48;
    public static final int GRAPH_RET = 52;
    public static final int GRAPH_SIZE = 56;

    // struct cpu_graph_event
    public static final int CPU_GRAPH_CGRAPH = 24;
    public static final int CPU_GRAPH_N_NODES = 32;
    public static final int CPU_GRAPH_RET = 36;
    public static final int CPU_GRAPH_SIZE = 40;

    // struct probe_config (.rodata)
    public static final int CONFIG_TARGET_TGID = 0;
    public static final int CONFIG_CGRAPH_N_NODES_OFFSET = 4;
    public static final int CONFIG_SIZE = 8;
}
