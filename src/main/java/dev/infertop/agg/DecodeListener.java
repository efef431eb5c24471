package dev.infertop.agg;

/**
 * A layer told of the token layer's decode calls (a typed subscription: a {@link LayerAggregator} that implements
 * it is subscribed by {@link TraceAggregator#register}, as its records are). Called after the graph records the
 * call caused. Collector thread only.
 */
public interface DecodeListener {
    /**
     * A llama_decode call of {@code nTokens} returned on {@code tid}; {@code latestGraphSeq} is the operator
     * layer's latest CPU graph (0 without it): what the listener counted on that thread since belongs to those tokens.
     */
    default void onDecodeCall(int tid, int nTokens, long latestGraphSeq) {}

    /**
     * The call was a decode step of {@code tokens} generated tokens at {@code contextPositions} positions of context
     * in all (-1: not read), computed by the CPU graph {@code graphSeq}. Only with the operator layer's graphs.
     */
    default void onDecodeStep(long graphSeq, int tokens, long contextPositions) {}

    /** A successful call's {@code tokens} whose positions were read, {@code contextPositions} of context in all. */
    default void onPositionedTokens(int tokens, long contextPositions) {}
}
