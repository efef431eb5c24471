package dev.infertop.agg.graph;

/**
 * A layer that reads the CPU graph of each compute: the operator statistics, the MoE layer's plans and node
 * times, the operator DAG, the counters layer's per-op deltas, the sched layer's per-op off-CPU time. Told
 * once per graph, when the next graph starts (or tracing ends), with the graph assembled once for all of them.
 */
public interface CpuGraphListener {
    /**
     * Graph {@code graph.seq()} is finished: attributed, unattributed, not read or in flight
     * ({@link CpuGraph#status()}). The graph and its arrays are valid during the call only: the assembler
     * reuses them for the next graph, so a listener that keeps something copies it.
     */
    void onGraph(CpuGraph graph);
}
