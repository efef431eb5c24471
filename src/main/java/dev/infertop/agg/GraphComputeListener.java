package dev.infertop.agg;

/**
 * A layer that follows every graph compute of every backend, as the graph layer sees them (a typed subscription: a
 * {@link LayerAggregator} that implements it is subscribed by {@link TraceAggregator#register}). Collector thread only.
 */
public interface GraphComputeListener {
    /** ggml_backend_graph_compute_async(backend, graph) ran from {@code startNs} to {@code endNs} on {@code tid}. */
    void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow);
}
