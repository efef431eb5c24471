package dev.infertop.bpf;

import dev.infertop.event.EventLayout;

/**
 * The layouts infertop writes into the BPF object (its .rodata config) and its control maps, mirrored from
 * native/events.h like event.EventLayout mirrors the records the probes send back. Split from EventLayout so
 * that each holds one side: bpf loads and steers the probes (and reads the bounds it shares with the records
 * from EventLayout), event decodes what they send. EventLayoutTest checks both against the C headers.
 */
public final class ControlLayout {
    private ControlLayout() {}

    // struct probe_config (.rodata)
    public static final int CONFIG_TARGET_TGID = 0;
    public static final int CONFIG_CGRAPH_N_NODES_OFFSET = 4;
    public static final int CONFIG_CGRAPH_NODES_OFFSET = 8;
    public static final int CONFIG_TENSOR_TYPE_OFFSET = 12;
    public static final int CONFIG_TENSOR_NE_OFFSET = 16;
    public static final int CONFIG_TENSOR_OP_OFFSET = 20;
    public static final int CONFIG_TENSOR_OP_PARAMS_OFFSET = 24;
    public static final int CONFIG_TENSOR_FLAGS_OFFSET = 28;
    public static final int CONFIG_TENSOR_SRC_OFFSET = 32;
    public static final int CONFIG_TENSOR_NAME_OFFSET = 36;
    public static final int CONFIG_MAX_GRAPH_NODES = 40;
    public static final int CONFIG_GRAPH_REFRESH = 44;
    public static final int CONFIG_TENSOR_DATA_OFFSET = 48;
    public static final int CONFIG_TENSOR_NB_OFFSET = 52;
    public static final int CONFIG_OP_MUL_MAT_ID = 56;
    public static final int CONFIG_COMPUTE_FLAG = 60;
    public static final int CONFIG_EMPTY_OPS = 64;
    public static final int CONFIG_BATCH_POS_OFFSET = 80;
    public static final int CONFIG_BATCH_N_SEQ_ID_OFFSET = 84;
    public static final int CONFIG_BATCH_SEQ_ID_OFFSET = 88;
    public static final int CONFIG_BATCH_LOGITS_OFFSET = 92;
    public static final int CONFIG_OP_GET_ROWS = 96;
    public static final int CONFIG_TYPE_I32 = 100;
    public static final int CONFIG_SIZE = 104;

    // struct graph_name_key / graph_name_value (the `graph_names` LPM trie)
    public static final int GRAPH_NAME_BYTES = 48;
    public static final int GRAPH_NAMES_MAX = 64;
    public static final int GRAPH_NAME_KEY_PREFIXLEN = 0;
    public static final int GRAPH_NAME_KEY_NAME = 4;
    public static final int GRAPH_NAME_KEY_SIZE = 52;
    public static final int GRAPH_NAME_VALUE_KIND = 0;
    public static final int GRAPH_NAME_VALUE_RUNTIME = 4;
    public static final int GRAPH_NAME_VALUE_SIZE = 8;

    // struct op_control (map value)
    public static final int OP_CONTROL_ENABLED = 0;
    public static final int OP_CONTROL_EVERY = 4;
    public static final int OP_CONTROL_FILTER_THREADS = 8;
    public static final int OP_CONTROL_SIZE = 12;

    // struct counter_control and the per-CPU counter maps
    public static final int MAX_COUNTER_EVENTS = EventLayout.MAX_COUNTER_EVENTS; // one bound, the records'
    public static final int MAX_COUNTER_CPUS = 1024;
    public static final int COUNTER_CONTROL_ENABLED = 0;
    public static final int COUNTER_CONTROL_N_EVENTS = 4;
    public static final int COUNTER_CONTROL_SIZE = 8;

    // struct moe_control, moe_plan_key / moe_plan / moe_group_bits
    public static final int MOE_PLAN_GROUPS = EventLayout.MOE_PLAN_GROUPS; // one bound, the records'
    public static final int MOE_CONTROL_ENABLED = 0;
    public static final int MOE_CONTROL_SIZE = 4;
    public static final int MOE_PLAN_KEY_SIGNATURE = 0;
    public static final int MOE_PLAN_KEY_GROUP = 8;
    public static final int MOE_PLAN_KEY_SIZE = 16;
    public static final int MOE_PLAN_IDS_TENSOR = 0;
    public static final int MOE_PLAN_COPIED_SEQ = 8;
    public static final int MOE_PLAN_LAYER = 16;
    public static final int MOE_PLAN_SIZE = 24;
    public static final int MOE_GROUP_BITS_SIZE = MOE_PLAN_GROUPS / 8;
}
