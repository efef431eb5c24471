package dev.infertop.event;

/**
 * Decoded probe records, one method per record kind, primitives only: the ring-buffer reader calls these
 * for every event, so implementations must not allocate per call.
 */
public interface TraceListener {
    /** One llama_decode call; nTokens 1 is a decode step, more is prefill; status is its return value. */
    void onDecode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status);

    /**
     * One ggml_backend_graph_compute_async call. The backend's 16-byte GUID arrives as two big-endian longs
     * (bytes 0-7, 8-15) so it reads like the source's initialiser.
     */
    void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow,
                        int nNodes, int status);

    /** One ggml_graph_compute call (the CPU backend's own entry). */
    void onCpuGraphCompute(int tid, long startNs, long endNs, long cgraphAddress, int nNodes, int status);
}
