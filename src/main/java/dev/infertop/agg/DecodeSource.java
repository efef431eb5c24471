package dev.infertop.agg;

/**
 * The aggregator that counts decode calls (the token layer's) and tells the {@link DecodeListener}s of them:
 * {@link TraceAggregator#register} subscribes every registered listener to every registered source, whichever
 * came first. Collector thread only.
 */
public interface DecodeSource {
    /** Tells {@code listener} of every decode call from now on. */
    void decodesTo(DecodeListener listener);
}
