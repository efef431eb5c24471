package dev.infertop.bpf;

/**
 * Graph computes begun and not yet ended at a tick: what the graph layer's entry probes keep per thread until the
 * return probe sends the graph's record. The aggregator counts the part of such a graph before the tick in the
 * interval that ends there, so that a graph spanning an interval edge is split across the two intervals and no
 * interval's busy time exceeds its length.
 */
public interface GraphsInFlight {
    /** None (no probes: a replay, the warm-up, a test). */
    GraphsInFlight NONE = each -> { };

    /** Calls {@code each} once per graph in flight now. */
    void forEach(Each each);

    @FunctionalInterface
    interface Each {
        /**
         * @param cpuPath   a {@code ggml_graph_compute} (the CPU path) rather than a backend's graph compute
         * @param tid       the thread computing it
         * @param startNs   when it began (CLOCK_MONOTONIC, as the records' timestamps)
         * @param guidHigh  the backend's GUID, first 8 bytes big-endian (0 on the CPU path)
         * @param guidLow   the backend's GUID, last 8 bytes big-endian
         */
        void graph(boolean cpuPath, int tid, long startNs, long guidHigh, long guidLow);
    }
}
