package dev.infertop.model;

/**
 * What a tensor's name tells about the graph it is in, as a runtime's description names it
 * ({@link GraphRuntimes}): enum graph_name_kind in native/events.h, whose values {@link #wire} mirrors.
 */
public enum GraphNameKind {
    /** A weight that GET_ROWS reads one row of per token: its I32 input's length is the batch's tokens. */
    TOKEN_EMBEDDING(1, "token-embedding", "GRAPH_NAME_TOKEN_EMBEDDING"),
    /** The I32 input holding the batch's positions: a generation step continues a sequence, a restart is at 0. */
    POSITIONS(2, "positions", "GRAPH_NAME_POSITIONS"),
    /** The attention mask: its ne[0] is the KV length the batch attends. */
    KV_MASK(3, "kv-mask", "GRAPH_NAME_KV_MASK"),
    /** The logits, the graph's last node: its ne[1] is how many outputs the batch computed. */
    OUTPUT(4, "output", "GRAPH_NAME_OUTPUT"),
    /** An input only an encoder pass takes (whisper's "mel"): the graph is an encoder pass, not a decode. */
    ENCODER_INPUT(5, "encoder-input", "GRAPH_NAME_ENCODER_INPUT"),
    /**
     * The I32 token ids a GET_ROWS reads the token embedding by, where the runtime names its inputs and not its
     * weights (whisper.cpp's "embd"): its length is the batch's tokens.
     */
    TOKEN_IDS(6, "token-ids", "GRAPH_NAME_TOKEN_IDS"),
    /**
     * The selected experts' ids (MUL_MAT_ID's src[2], one row per token, named "name-LAYER"): the MoE layer reads
     * them where the scheduler copies them back to the host (experts computed on a device from host memory).
     */
    MOE_IDS(7, "moe-ids", "GRAPH_NAME_MOE_IDS");

    private final int wire;
    private final String word;
    private final String cName;

    GraphNameKind(int wire, String word, String cName) {
        this.wire = wire;
        this.word = word;
        this.cName = cName;
    }

    /** The value the probes store and compare (enum graph_name_kind). */
    public int wire() {
        return wire;
    }

    /** How config/runtimes.conf spells it. */
    public String word() {
        return word;
    }

    /** The C enumerator's name (EventLayoutTest checks the two agree). */
    public String cName() {
        return cName;
    }

    /** The kind {@code word} names, or null. */
    public static GraphNameKind ofWord(String word) {
        for (GraphNameKind kind : values()) {
            if (kind.word.equals(word)) {
                return kind;
            }
        }
        return null;
    }
}
