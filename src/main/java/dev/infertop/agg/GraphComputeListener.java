package dev.infertop.agg;

/**
 * A layer that follows every graph compute of every backend, as the graph layer sees them (a typed subscription:
 * {@link TraceAggregator#followGraphComputes}). Collector thread only.
 */
public interface GraphComputeListener {
    /** ggml_backend_graph_compute_async(backend, graph) ran from {@code startNs} to {@code endNs} on {@code tid}. */
    void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow);

    /**
     * A llama_decode call of {@code nTokens} returned on {@code tid} (the token layer's record, after the graph
     * records it caused): what the follower counted on that thread since belongs to those tokens.
     */
    default void onDecodeCall(int tid, int nTokens) {}
}
