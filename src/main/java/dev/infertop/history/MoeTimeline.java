package dev.infertop.history;

/**
 * The MoE layer's records in the flight recorder: one INSTANT per MUL_MAT_ID ids read, on the thread that copied
 * the ids, at the copy's time, carrying the layer, the batch's tokens, the experts used per token and how many of
 * the batch's tokens went to each expert. A batch of any size is one record whose payload is bounded by
 * {@link #MAX_EXPERTS_PER_RECORD} (experts, not tokens), so a 512-token prefill costs what a decode step does.
 *
 * <p>Payload (longs): layer, tokens, experts used, experts that got tokens, then one (expert &lt;&lt; 32 | count)
 * per expert with a count, lowest expert first, at most {@link #MAX_EXPERTS_PER_RECORD}. Collector thread only;
 * allocation-free per record.
 */
public final class MoeTimeline {
    /** The instant's name in the trace. */
    public static final String NAME = "moe experts";
    /** Experts whose counts one record keeps (llama.cpp models route to at most 256 experts; most use 8..128). */
    public static final int MAX_EXPERTS_PER_RECORD = 64;
    static final int HEADER = 4;

    private final FlightRecorder flight;
    private final int label;
    private final long[] scratch = new long[HEADER + MAX_EXPERTS_PER_RECORD];

    public MoeTimeline(FlightRecorder flight) {
        this.flight = flight;
        this.label = flight.label(NAME);
    }

    /** One ids read: {@code tokensByExpert[e]} tokens of the batch went to expert e. */
    public void activation(int tid, long atNs, int layer, long tokens, int expertsUsed, long[] tokensByExpert) {
        int count = HEADER;
        long active = 0;
        for (int e = 0; e < tokensByExpert.length; e++) {
            if (tokensByExpert[e] <= 0) {
                continue;
            }
            active++;
            if (count < scratch.length) {
                scratch[count++] = ((long) e << 32) | Math.min(tokensByExpert[e], 0xffff_ffffL);
            }
        }
        scratch[0] = layer;
        scratch[1] = tokens;
        scratch[2] = expertsUsed;
        scratch[3] = active;
        flight.recordWithPayload(FlightRecorder.Kind.INSTANT, tid, atNs, atNs, label, scratch, count);
    }

    /** An activation as read back from a copied slice. */
    public record Activation(int layer, long tokens, int expertsUsed, long expertsActive, int[] experts,
                             long[] counts) {
        /** Whether every expert that got tokens is in {@code experts} (false: the bound cut the list). */
        public boolean complete() {
            return experts.length == expertsActive;
        }
    }

    /** The activation a slice holds, or null when it is not one (another instant, or its payload is short). */
    public static Activation read(FlightRecorder.Window window, FlightRecorder.Slice slice) {
        long[] p = slice.payload();
        if (slice.kind() != FlightRecorder.Kind.INSTANT || p.length < HEADER || !NAME.equals(window.label(slice.label()))) {
            return null;
        }
        int pairs = p.length - HEADER;
        int[] experts = new int[pairs];
        long[] counts = new long[pairs];
        for (int k = 0; k < pairs; k++) {
            experts[k] = (int) (p[HEADER + k] >>> 32);
            counts[k] = p[HEADER + k] & 0xffff_ffffL;
        }
        return new Activation((int) p[0], p[1], (int) p[2], p[3], experts, counts);
    }
}
