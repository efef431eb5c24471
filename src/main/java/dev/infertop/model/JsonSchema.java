package dev.infertop.model;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The top-level fields of a JSON Lines object (and of a snapshot's summary.json), declared once: the key is the
 * constant's name in lower case, and a field that is not in every object says when it is there. The objects inside
 * that more than one class spells (an op, a thread, a latency, the roofline, ...) have their keys in the nested
 * enums below, {@link #OBJECTS} saying where each one is. The writers ({@code json.JsonLinesView} and its parts,
 * {@code export.SummaryWriter}) and the readers ({@code diff}, {@code snapshot}: report, replay) name keys through
 * these constants only; view.JsonSchemaTest holds the writer, the readers, man/infertop.1's JSON FIELDS and the
 * Prometheus mapping to this list, and fails on a key spelled as a literal. It is here, in {@code model}, so that
 * every package that writes or reads the JSON (and {@link Layer}, which names its sections) may import it.
 * A new field is one line here, one {@code .B} line in the man page.
 */
public enum JsonSchema {
    FINAL, SEQ, SCOPE, SPAN_S, PID, COMMAND,
    MODEL("once the target maps its model file"),
    TARGET_STATE,
    TOKEN_SOURCE, TOKEN_STATE, GRAPH_TOKENS,
    DECODE_CALLS, PREFILL_CALLS, DECODE_STEP_CALLS, FAILED_CALLS, ENCODE_CALLS, ENCODE_TOKENS,
    TOKENS_PREFILL, TOKENS_DECODE,
    PREFILL_TOKENS_PER_S, DECODE_TOKENS_PER_S, DECODE_TOKENS_PER_S_P50, DECODE_THROUGHPUT_PER_S,
    CONTEXTS, TTFT_MS, TPOT_MS, REQUESTS, SPECULATIVE, BATCH_SIZES,
    WHISPER("for a whisper.cpp program"),
    GRAPH_COMPUTES, GRAPH_NODES, GRAPH_BUSY_MS, CPU_GRAPH_COMPUTES, CPU_GRAPH_NODES, CPU_GRAPH_BUSY_MS,
    OP_GRAPHS, OP_GRAPHS_UNATTRIBUTED, OPS, OPS_ESTIMATED, OPS_SAMPLED, SAMPLED, THREADS,
    ROOFLINE("with the operator layer, once a node was costed"),
    SCHED,
    COUNTERS("while the counters layer is not off"),
    BACKENDS,
    OFFLOAD,
    MOE("with the moe layer, once it read experts"),
    LOST_EVENTS, LIMITS,
    BUDGET("with --budget"),
    LAYERS,
    /** Documented in infertop-snapshot's pages, not in JSON FIELDS: it describes the directory, not the run. */
    SNAPSHOT("summary.json only", true);

    private final String presentWhen;
    private final boolean summaryOnly;
    /** Made once: the writer asks for every key of every line. */
    private final String key;

    JsonSchema() {
        this(null, false);
    }

    JsonSchema(String presentWhen) {
        this(presentWhen, false);
    }

    JsonSchema(String presentWhen, boolean summaryOnly) {
        this.presentWhen = presentWhen;
        this.summaryOnly = summaryOnly;
        this.key = name().toLowerCase(Locale.ROOT);
    }

    /** The field's key in the JSON object. */
    public String key() {
        return key;
    }

    /** Whether every JSON line has this field. */
    public boolean always() {
        return presentWhen == null;
    }

    /** When an optional field is present (null for one that always is). */
    public String presentWhen() {
        return presentWhen;
    }

    /** Whether only summary.json has it, never a JSON line. */
    public boolean summaryOnly() {
        return summaryOnly;
    }

    /** The field whose key is {@code key}, or null when none is declared. */
    public static JsonSchema ofKey(String key) {
        for (JsonSchema field : values()) {
            if (field.key().equals(key)) {
                return field;
            }
        }
        return null;
    }

    /** A key of one of the objects inside a line. */
    public interface Key {
        String key();
    }

    /** A latency object: {@code ttft_ms}, {@code tpot_ms} (and the same in {@code requests}). */
    public enum LatencyField implements Key {
        COUNT, P50, P90, P99, MAX, MEAN;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code ops} (and of {@code ops_estimated}, which has groups and wall_ms). */
    public enum OpField implements Key {
        GROUPS, NODES, WALL_MS, WORK_MS, BARRIER_WAIT_MS, P50_MS, P90_MS, P99_MS, MAX_MS, LAST_SHAPE;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code ops_sampled}: the operator layer's clock samples, named by what the exact windows taught. */
    public enum OpsSampledField implements Key {
        PERIOD_MS, SAMPLES, UNKNOWN, BARRIER_WAIT, OUTSIDE_GRAPHS, LEARNED_SAMPLES, LEARNED_LINES, OPS, THREADS,
        BETWEEN_WINDOWS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code ops_sampled.ops} (and of {@code ops_sampled.between_windows.ops}). */
    public enum SampledOpField implements Key {
        SAMPLES, SHARE;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One thread of {@code ops_sampled.threads}. */
    public enum SampledThreadField implements Key {
        SAMPLES, OP;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code ops_sampled.between_windows}: the run's samples no exact window covered. */
    public enum SampledBetweenField implements Key {
        SAMPLES, UNKNOWN, OPS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One worker thread of {@code threads}. */
    public enum ThreadField implements Key {
        GROUPS, WORK_MS, BARRIER_WAIT_MS, CPU, MIGRATIONS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One backend of {@code backends}. */
    public enum BackendField implements Key {
        GRAPHS, NODES, BUSY_MS, OPS, DISPATCH;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code offload}: device time per backend, and the tensors copied between backends. */
    public enum OffloadField implements Key {
        BACKENDS, COPIES, COPIES_FOLDED, HOST_DISPATCH, PER_TOKEN, STAYED_ON_CPU;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /**
     * One backend of {@code offload.backends}: {@code device_complete_ms} only where {@code completion} is
     * "device-complete" (never a 0 that reads as an idle device).
     */
    public enum OffloadBackendField implements Key {
        COMPLETION, GRAPHS, ENQUEUE_MS, COMPLETED_GRAPHS, COMPLETED_ENQUEUE_MS, DEVICE_COMPLETE_MS, HOST_WAITS,
        HOST_WAIT_MS, COPIES_IN, BYTES_IN, COPY_MS, BYTES_IN_PER_GRAPH, COPIES_UNSEEN;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One backend of {@code offload.host_dispatch}: host time in its compute calls and synchronizes, never device time. */
    public enum OffloadDispatchField implements Key {
        SUBMITS, SUBMIT_MS, FENCE_WAITS, FENCE_WAIT_MS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /**
     * {@code offload.per_token}: bytes copied in the llama_decode calls that ended, by their tokens; a
     * {@code bytes_in_per_*} key only where there were such tokens (never a 0 for "none").
     */
    public enum OffloadTokenField implements Key {
        PROMPT_TOKENS, PROMPT_BYTES_IN, BYTES_IN_PER_PROMPT_TOKEN, GENERATED_TOKENS, GENERATED_BYTES_IN,
        BYTES_IN_PER_GENERATED_TOKEN, COPIES_UNSEEN_INTO;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code offload.stayed_on_cpu}: the CPU graphs read once a device computed, and their computing nodes. */
    public enum OffloadStayedField implements Key {
        CPU_GRAPHS, OPS_PER_GRAPH, NODES, NODES_FOLDED;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One node of {@code offload.stayed_on_cpu.nodes}. */
    public enum OffloadStayedNodeField implements Key {
        OP, TENSOR, SHAPE, RUNS, RUNS_PER_GRAPH;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One tensor of {@code offload.copies}. */
    public enum OffloadCopyField implements Key {
        TENSOR, TO_BACKEND, TYPE, SHAPE, COPIES, BYTES, COPY_MS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of a backend's {@code ops}. */
    public enum BackendOpField implements Key {
        NODES, MS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code backends.*.dispatch}: the host's node-by-node dispatch of a device backend's graphs. */
    public enum BackendDispatchField implements Key {
        GRAPHS, CALLS, DISPATCHES, FUSED_NODES, OPS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code backends.*.dispatch.ops}. */
    public enum BackendDispatchOpField implements Key {
        CALLS, DISPATCHES, FUSED;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One layer of {@code layers}. */
    public enum LayerField implements Key {
        STATE, REASON, PROBES;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code budget}. */
    public enum BudgetField implements Key {
        LIMIT_PERCENT, ESTIMATE_PERCENT, FULL_TRACING_PERCENT, ARRIVAL_SHARE, WINDOW_S, SAMPLING;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code roofline}. */
    public enum RooflineField implements Key {
        MEMORY_CEILING_GB_PER_S, COMPUTE_CEILING_GFLOP_PER_S, RIDGE_FLOP_PER_BYTE, DECODE_GRAPHS,
        WEIGHT_BYTES_PER_DECODE_TOKEN, EXPERT_WEIGHT_BYTES_PER_DECODE_TOKEN, UNCOSTED_NODES, UNROUTED_NODES,
        DECODE_BOUND_TOKENS_PER_S, MEASURED_DECODE_TOKENS_PER_S, KV_BYTES_PER_POSITION,
        KV_OVERTAKES_WEIGHTS_AT_POSITIONS, POSITIONED_TOKENS, POSITIONED_CONTEXT_POSITIONS, RIDGE_BATCH_TOKENS,
        DECODE_STEPS, OPS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code roofline.ops}. */
    public enum RooflineOpField implements Key {
        NODES, BYTES, WEIGHT_BYTES, FLOPS, WALL_MS, GB_PER_S, GFLOP_PER_S, FLOP_PER_BYTE, MEMORY_SHARE,
        COMPUTE_SHARE, VERDICT;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code sched}. */
    public enum SchedField implements Key {
        RECORDS, RECORDS_PER_S, KERNEL_HITS, EST_COST_CORE_FRACTION, RUNNING_NS, RUNNABLE_NS, SLEEPING_NS, THREADS,
        OPS, INTERFERERS, INTERFERERS_OTHER_NS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One thread of {@code sched.threads}. */
    public enum SchedThreadField implements Key {
        RUNNING_NS, RUNNABLE_NS, SLEEPING_NS, SWITCHES, PREEMPTIONS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code sched.ops}. */
    public enum SchedOpField implements Key {
        RUNNABLE_NS, SLEEPING_NS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One task of {@code sched.interferers}. */
    public enum InterfererField implements Key {
        PID, COMM, NS, WAIT_SHARE, SAME_PROCESS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code counters}. */
    public enum CountersField implements Key {
        STATE, STATUS, THRESHOLDS, SET, EVENTS, LINE_BYTES, ROLES, GROUPS, MIGRATED_GROUPS, SWITCHED_GROUPS,
        FAILED_READS, COUNTED_MS, VALUES, SILENT_EVENTS, SILENT_NOTICE, REFILL_BYTES_PER_S, EST_COST_CPU_FRACTION, OPS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code counters.roles}: which event plays each part in the derived figures. */
    public enum CounterRoleField implements Key {
        REFILLS, INSTRUCTIONS, CYCLES;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One op of {@code counters.ops}. */
    public enum CounterOpField implements Key {
        GROUPS, MIGRATED_GROUPS, SWITCHED_GROUPS, COUNTED_MS, WALL_MS, VALUES, IPC, REFILLS_PER_1K_INSTRUCTIONS,
        REFILL_BYTES_PER_S, VERDICT;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code moe}. */
    public enum MoeField implements Key {
        WINDOW_INTERVALS, EXPERTS_USED, EXPERTS, ID_BYTES_BOUND, NODES_READ, NODES_TRUNCATED, ROWS_TRUNCATED,
        GRAPHS_WITHOUT_IDS, READ_FAILURES, ID_BYTES_COPIED, IMBALANCE_CV, LAYERS, PER_EXPERT,
        NODES_READ_FROM_HOST_COPIES, NODES_ON_DEVICES;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One layer of {@code moe.layers}. */
    public enum MoeLayerField implements Key {
        TOKENS_PREFILL, TOKENS_DECODE, TOKENS_UNREAD, PREFILL, DECODE, WINDOW_TOKENS_PREFILL, WINDOW_TOKENS_DECODE,
        WINDOW_PREFILL, WINDOW_DECODE, CV;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One expert of {@code moe.per_expert}. */
    public enum MoeExpertField implements Key {
        ACTIVE_NODES, NODE_P50_MS, NODE_P99_MS, ROW_SHARE_MS, REUSE_MEAN_TOKENS, TOKENS_SINCE_LAST;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** summary.json's {@code snapshot}. */
    public enum SnapshotField implements Key {
        FORMAT, VERSION, TRIGGER, CREATED, INFERTOP_VERSION, TARGET, LAYERS_ON, PROBE_OVERHEAD_CPU_FRACTION_EST,
        LOST_EVENTS, FLIGHT_RECORDER, FILES, LEFT_OUT;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** summary.json's {@code snapshot.target}. */
    public enum SnapshotTargetField implements Key {
        PID, COMMAND, MODEL, LIBRARIES;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** A file of {@code snapshot.target}: the model, each library. */
    public enum FileIdentityField implements Key {
        PATH, BYTES, MODIFIED;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code requests}. */
    public enum RequestsField implements Key {
        COUNT, ACTIVE, TTFT_MS, TPOT_MS, PROMPT_TOKENS, GENERATED_TOKENS, BATCHES_UNREAD;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code graph_tokens}: what the graphs alone said (model.GraphTokenCounts). */
    public enum GraphTokensField implements Key {
        GRAPHS, PROMPT_TOKENS, GENERATED_TOKENS, POSITIONS_READ, ENCODER_PASSES, REQUESTS;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code speculative}. */
    public enum SpeculativeField implements Key {
        VERIFY_STEPS, DRAFT_TOKENS, ACCEPTED_TOKENS, ACCEPTANCE_RATE, UNRESOLVED_STEPS, DRAFT_CALLS,
        DRAFT_TOKENS_DECODED, ACCEPTED_BY_POSITION;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code whisper}: whisper.cpp's own units ({@link WhisperTotals}). */
    public enum WhisperField implements Key {
        TRANSCRIPTIONS, FAILED_TRANSCRIPTIONS, AUDIO_S, SAMPLES_UNKNOWN, TRANSCRIBING_S, REAL_TIME_FACTOR,
        ENCODER_PASSES, DECODER_CALLS, DECODER_TOKENS, DECODER_TOKENS_PER_S;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code sampled}. */
    public enum SampledField implements Key {
        OPERATOR_SAMPLED_RATIO, WINDOW_FIGURES;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One batch size of {@code roofline.decode_steps}. */
    public enum DecodeStepField implements Key {
        STEPS, TOKENS, WEIGHT_BYTES_PER_STEP, KV_BYTES_PER_STEP, CONTEXT_POSITIONS_PER_STEP, FLOPS_PER_STEP,
        WEIGHT_BYTES_PER_TOKEN, KV_BYTES_PER_TOKEN, FLOP_PER_BYTE, WALL_MS, MEASURED_TOKENS_PER_S, BOUND_TOKENS_PER_S,
        VERDICT;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** {@code counters.thresholds}. */
    public enum ThresholdField implements Key {
        MEMORY_BOUND_REFILLS_PER_1K_INSTRUCTIONS, COMPUTE_BOUND_IPC;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** summary.json's {@code snapshot.flight_recorder}. */
    public enum FlightRecorderField implements Key {
        WINDOW_S, RECORDS, TRUNCATED;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /** One file of summary.json's {@code snapshot.left_out}. */
    public enum LeftOutField implements Key {
        FILE, WHY;
        private final String key = name().toLowerCase(Locale.ROOT);
        public String key() { return key; }
    }

    /**
     * Where each nested enum's object is, as a path of keys from the line's top ({@code *}: any key, an op's name,
     * a thread's tid, a layer's id; {@code []}: each element of an array). What the writer puts at each path is held
     * to the enum's keys by JsonSchemaTest.
     */
    public static final Map<String, Class<? extends Key>> OBJECTS = Map.ofEntries(
            Map.entry("ttft_ms", LatencyField.class), Map.entry("tpot_ms", LatencyField.class),
            Map.entry("requests.ttft_ms", LatencyField.class), Map.entry("requests.tpot_ms", LatencyField.class),
            Map.entry("requests", RequestsField.class), Map.entry("speculative", SpeculativeField.class),
            Map.entry("graph_tokens", GraphTokensField.class),
            Map.entry("sampled", SampledField.class), Map.entry("roofline.decode_steps.*", DecodeStepField.class),
            Map.entry("whisper", WhisperField.class),
            Map.entry("counters.thresholds", ThresholdField.class),
            Map.entry("snapshot.flight_recorder", FlightRecorderField.class),
            Map.entry("snapshot.left_out.[]", LeftOutField.class),
            Map.entry("ops.*", OpField.class), Map.entry("ops_estimated.*", OpField.class),
            Map.entry("ops_sampled", OpsSampledField.class), Map.entry("ops_sampled.ops.*", SampledOpField.class),
            Map.entry("ops_sampled.threads.*", SampledThreadField.class),
            Map.entry("ops_sampled.between_windows", SampledBetweenField.class),
            Map.entry("ops_sampled.between_windows.ops.*", SampledOpField.class),
            Map.entry("threads.*", ThreadField.class),
            Map.entry("backends.*", BackendField.class), Map.entry("backends.*.ops.*", BackendOpField.class),
            Map.entry("backends.*.dispatch", BackendDispatchField.class),
            Map.entry("backends.*.dispatch.ops.*", BackendDispatchOpField.class),
            Map.entry("offload", OffloadField.class), Map.entry("offload.backends.*", OffloadBackendField.class),
            Map.entry("offload.copies.[]", OffloadCopyField.class),
            Map.entry("offload.host_dispatch.*", OffloadDispatchField.class),
            Map.entry("offload.per_token", OffloadTokenField.class),
            Map.entry("offload.stayed_on_cpu", OffloadStayedField.class),
            Map.entry("offload.stayed_on_cpu.nodes.[]", OffloadStayedNodeField.class),
            Map.entry("layers.*", LayerField.class),
            Map.entry("budget", BudgetField.class),
            Map.entry("roofline", RooflineField.class), Map.entry("roofline.ops.*", RooflineOpField.class),
            Map.entry("sched", SchedField.class), Map.entry("sched.threads.*", SchedThreadField.class),
            Map.entry("sched.ops.*", SchedOpField.class), Map.entry("sched.interferers.[]", InterfererField.class),
            Map.entry("counters", CountersField.class), Map.entry("counters.roles", CounterRoleField.class),
            Map.entry("counters.ops.*", CounterOpField.class),
            Map.entry("moe", MoeField.class), Map.entry("moe.layers.*", MoeLayerField.class),
            Map.entry("moe.per_expert.*", MoeExpertField.class),
            Map.entry("snapshot", SnapshotField.class), Map.entry("snapshot.target", SnapshotTargetField.class),
            Map.entry("snapshot.target.model", FileIdentityField.class),
            Map.entry("snapshot.target.libraries.[]", FileIdentityField.class));

    /** Every nested enum, each once. */
    public static List<Class<? extends Key>> nestedKeys() {
        return OBJECTS.values().stream().distinct().sorted(java.util.Comparator.comparing(Class::getName)).toList();
    }
}
