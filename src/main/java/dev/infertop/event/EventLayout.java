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
    public static final int EVENT_NODE = 4;
    public static final int EVENT_ARRIVALS = 5;
    public static final int EVENT_FUSED = 7;
    public static final int EVENT_GRAPH_SAME = 8;
    public static final int EVENT_BATCH = 14;
    public static final int EVENT_SEQ_RM = 15;
    /** One llama_process(ENCODE) call: a struct decode_event, counted apart from the decode calls. */
    public static final int EVENT_ENCODE = 16;
    /** What one graph says of its tokens: struct graph_tokens_event (token layer, from the graphs). */
    public static final int EVENT_GRAPH_TOKENS = 17;
    /** One whisper_full_with_state call: struct whisper_full_event (token layer, whisper.cpp's own API). */
    public static final int EVENT_WHISPER_FULL = 18;
    /** A target thread found on its CPU by the operator layer's clock sampler: struct op_sample_event. */
    public static final int EVENT_OP_SAMPLE = 20;
    /** The largest record kind: the decoder keeps one listener per kind up to it. */
    public static final int MAX_EVENT_KIND = 21;

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

    // struct batch_event, struct batch_token
    public static final int MAX_BATCH_TOKENS = 2048;
    public static final int BATCH_CTX = 24;
    public static final int BATCH_N_TOKENS = 32;
    public static final int BATCH_RECORDED = 36;
    public static final int BATCH_TOKENS = 40;
    public static final int BATCH_TOKEN_POS = 0;
    public static final int BATCH_TOKEN_SEQ = 4;
    public static final int BATCH_TOKEN_LOGITS = 8;
    public static final int BATCH_TOKEN_N_SEQ = 9;
    public static final int BATCH_TOKEN_SIZE = 12;
    public static final int BATCH_SIZE = BATCH_TOKENS + MAX_BATCH_TOKENS * BATCH_TOKEN_SIZE;

    // struct seq_rm_event
    public static final int SEQ_RM_MEMORY = 24;
    public static final int SEQ_RM_SEQ = 32;
    public static final int SEQ_RM_P0 = 36;
    public static final int SEQ_RM_P1 = 40;
    public static final int SEQ_RM_SIZE = 48;

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

    // struct graph_tokens_event
    public static final int GRAPH_TOKENS_CGRAPH = 24;
    public static final int GRAPH_TOKENS_N_TOKENS = 32;
    public static final int GRAPH_TOKENS_N_OUTPUTS = 36;
    public static final int GRAPH_TOKENS_N_POSITIONS = 40;
    public static final int GRAPH_TOKENS_POS_FIRST = 44;
    public static final int GRAPH_TOKENS_POS_LAST = 48;
    public static final int GRAPH_TOKENS_KV_LEN = 52;
    public static final int GRAPH_TOKENS_RUNTIME = 56;
    public static final int GRAPH_TOKENS_LEVEL = 60;
    public static final int GRAPH_TOKENS_FLAGS = 64;
    public static final int GRAPH_TOKENS_RET = 68;
    public static final int GRAPH_TOKENS_SIZE = 72;

    // struct whisper_full_event
    public static final int WHISPER_FULL_N_SAMPLES = 24;
    public static final int WHISPER_FULL_RET = 28;
    public static final int WHISPER_FULL_SIZE = 32;
    // enum graph_tokens_level, graph_tokens_event.flags
    public static final int GRAPH_LEVEL_SCHED = 1;
    public static final int GRAPH_LEVEL_BACKEND = 2;
    public static final int GRAPH_LEVEL_CPU = 3;
    public static final int GRAPH_TOKENS_ENCODER = 1;
    public static final int GRAPH_TOKENS_POSITIONS = 2;
    public static final int GRAPH_TOKENS_TRUNCATED = 4;

    // struct node_event
    public static final int NODE_NAME_BYTES = 64;
    public static final int NODE_GRAPH_SEQ = 24;
    public static final int NODE_TENSOR = 32;
    public static final int NODE_SRC = 40;
    public static final int NODE_NE = 64;
    public static final int NODE_INDEX = 96;
    public static final int NODE_N_NODES = 100;
    public static final int NODE_OP = 104;
    public static final int NODE_TYPE = 108;
    public static final int NODE_FLAGS = 112;
    public static final int NODE_OP_PARAM0 = 116;
    public static final int NODE_NAME = 120;
    public static final int NODE_SIZE = 184;

    // struct arrivals_event
    public static final int MAX_ARRIVALS = 4096;
    public static final int ARRIVALS_GRAPH_SEQ = 24;
    public static final int ARRIVALS_COUNT = 32;
    public static final int ARRIVALS_CPU_FIRST = 36;
    public static final int ARRIVALS_CPU_LAST = 40;
    public static final int ARRIVALS_MIGRATED = 44;
    public static final int ARRIVALS_TS = 56;

    // struct thread_event
    public static final int THREAD_GRAPH_SEQ = 24;
    public static final int THREAD_CPU = 32;
    public static final int THREAD_SEQ = 36;
    public static final int THREAD_TENSOR = 40;
    public static final int THREAD_TENSOR2 = 48;
    public static final int THREAD_SIZE = 56;



    // Sched layer (native/sched.bpf.h)
    public static final int EVENT_SCHED_OFF = 10;
    public static final int EVENT_SCHED_CULPRIT = 11;

    // struct sched_off_event
    public static final int SCHED_OFF_WAKE_NS = 24;
    public static final int SCHED_OFF_RAN_NS = 32;
    public static final int SCHED_OFF_CPU_OUT = 40;
    public static final int SCHED_OFF_CPU_IN = 44;
    public static final int SCHED_OFF_PREEMPTED = 48;
    public static final int SCHED_OFF_SIZE = 56;

    // struct sched_culprit_event
    public static final int SCHED_COMM_BYTES = 16;
    public static final int SCHED_CULPRIT_NS = 24;
    public static final int SCHED_CULPRIT_PID = 32;
    public static final int SCHED_CULPRIT_TGID = 36;
    public static final int SCHED_CULPRIT_CPU = 40;
    public static final int SCHED_CULPRIT_COMM = 48;
    public static final int SCHED_CULPRIT_SIZE = 64;
    // Counters layer: enum event_kind EVENT_COUNTERS, struct counters_event (struct counter_control: in bpf)
    /** MAX_COUNTER_EVENTS of native/events.h (bpf.ControlLayout reads it from here). */
    public static final int MAX_COUNTER_EVENTS = 4;
    public static final int EVENT_COUNTERS = 12;
    public static final int MAX_COUNTER_GROUPS = 2048;
    public static final int COUNTERS_GRAPH_SEQ = 24;
    public static final int COUNTERS_COUNT = 32;
    public static final int COUNTERS_N_EVENTS = 36;
    public static final int COUNTERS_MIGRATED = 40;
    public static final int COUNTERS_FAILED = 44;
    public static final int COUNTERS_ENABLED = 48;
    public static final int COUNTERS_RUNNING = 80;
    public static final int COUNTERS_MIGRATED_BITS = 112;
    public static final int COUNTERS_SWITCHED = 368;
    public static final int COUNTERS_SWITCHED_BITS = 376;
    public static final int COUNTERS_DELTA = 632;
    public static final int COUNTERS_SIZE = 66168;
    // struct backend_ops_event (native/backends.bpf.h)
    public static final int EVENT_BACKEND_OPS = 13;
    public static final int BACKEND_OP_SLOTS = 128;
    public static final int BACKEND_OPS_BACKEND = 24;
    public static final int BACKEND_OPS_GUID = 32;
    public static final int BACKEND_OPS_N_NODES = 48;
    public static final int BACKEND_OPS_COUNTED = 52;
    public static final int BACKEND_OPS_OP_NODES = 56;
    public static final int BACKEND_OPS_SIZE = 312;
    // struct backend_dispatch_event (native/backends.bpf.h)
    public static final int EVENT_BACKEND_DISPATCH = 21;
    public static final int BACKEND_DISPATCH_BACKEND = 24;
    public static final int BACKEND_DISPATCH_GUID = 32;
    public static final int BACKEND_DISPATCH_N_NODES = 48;
    public static final int BACKEND_DISPATCH_CALLS = 52;
    public static final int BACKEND_DISPATCH_OP_CALLS = 56;
    public static final int BACKEND_DISPATCH_OP_FUSED = 312;
    public static final int BACKEND_DISPATCH_SIZE = 584;
    // struct op_sample_event (native/op_sample.bpf.h)
    public static final int OP_SAMPLE_IP = 24;
    public static final int OP_SAMPLE_CPU = 32;
    public static final int OP_SAMPLE_SIZE = 40;
    // struct offload_event (native/offload.bpf.h)
    public static final int EVENT_OFFLOAD = 19;
    public static final int OFFLOAD_SYNC = 1;
    public static final int OFFLOAD_COPY = 2;
    public static final int OFFLOAD_COPY_ASYNC = 3;
    public static final int OFFLOAD_EVENT_SYNC = 4;
    public static final int OFFLOAD_VK_SUBMIT = 5;
    public static final int OFFLOAD_VK_FENCE = 6;
    public static final int OFFLOAD_NAME_BYTES = 64;
    public static final int OFFLOAD_BACKEND = 24;
    public static final int OFFLOAD_GUID = 32;
    public static final int OFFLOAD_WHAT = 48;
    public static final int OFFLOAD_TYPE = 52;
    public static final int OFFLOAD_NE = 56;
    public static final int OFFLOAD_BYTES = 88;
    public static final int OFFLOAD_SRC_NAME = 96;
    public static final int OFFLOAD_DST_NAME = 160;
    public static final int OFFLOAD_SIZE = 224;
    // MoE layer: struct moe_event (moe_control, moe_plan_key / moe_plan / moe_group_bits: in bpf)
    /** MOE_PLAN_GROUPS of native/events.h (bpf.ControlLayout reads it from here). */
    public static final int MOE_PLAN_GROUPS = 4096;
    public static final int EVENT_MOE = 9;
    public static final int MOE_GRAPH = 1;
    public static final int MOE_IDS = 2;
    /** moe_event.group of ids read from the scheduler's host copy (MOE_GROUP_HOST_COPY). */
    public static final int MOE_GROUP_HOST_COPY = -1;
    public static final int MOE_MAX_ID_BYTES = 16384;
    public static final int MOE_GRAPH_SEQ = 24;
    public static final int MOE_SIGNATURE = 32;
    public static final int MOE_SUBTYPE = 40;
    public static final int MOE_GROUP = 44;
    public static final int MOE_VALUE = 48;
    public static final int MOE_LAYER = 52;
    public static final int MOE_NE0 = 56;
    public static final int MOE_NE1 = 64;
    public static final int MOE_NB1 = 72;
    public static final int MOE_FAILED = 80;
    public static final int MOE_IDS_OFFSET = 88;
}
