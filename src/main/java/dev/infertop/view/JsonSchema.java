package dev.infertop.view;

import java.util.Locale;

/**
 * The top-level fields of a JSON Lines object (and of a snapshot's summary.json), declared once: the key is the
 * constant's name in lower case, and a field that is not in every object says when it is there. JsonLinesView
 * writes these keys; JsonSchemaTest holds the writer, the readers (diff, snapshot) and man/infertop.1's JSON FIELDS
 * to this list. A new field is one line here, one {@code .B} line in the man page.
 */
public enum JsonSchema {
    FINAL, SEQ, SCOPE, SPAN_S, PID, COMMAND,
    MODEL("once the target maps its model file"),
    TARGET_STATE,
    DECODE_CALLS, PREFILL_CALLS, DECODE_STEP_CALLS, FAILED_CALLS, ENCODE_CALLS, ENCODE_TOKENS,
    TOKENS_PREFILL, TOKENS_DECODE,
    PREFILL_TOKENS_PER_S, DECODE_TOKENS_PER_S, DECODE_TOKENS_PER_S_P50, DECODE_THROUGHPUT_PER_S,
    CONTEXTS, TTFT_MS, TPOT_MS, REQUESTS, SPECULATIVE, BATCH_SIZES,
    GRAPH_COMPUTES, GRAPH_NODES, GRAPH_BUSY_MS, CPU_GRAPH_COMPUTES, CPU_GRAPH_NODES, CPU_GRAPH_BUSY_MS,
    OP_GRAPHS, OP_GRAPHS_UNATTRIBUTED, OPS, OPS_ESTIMATED, SAMPLED, THREADS,
    ROOFLINE("with the operator layer, once a node was costed"),
    SCHED,
    COUNTERS("while the counters layer is not off"),
    BACKENDS,
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
}
