package dev.infertop.agg;

/**
 * The experts a CPU graph's MUL_MAT_ID nodes were routed to, as the MoE layer read their ids: what the roofline
 * needs to cost only the experts a token chose. Asked during the graph's listener calls (the MoE layer keeps a
 * graph's reads until its next graph starts).
 */
@FunctionalInterface
public interface ExpertRouting {
    /** No routing known (no MoE layer): every MUL_MAT_ID is left uncosted, never guessed. */
    ExpertRouting NONE = (graphSeq, group) -> null;

    /**
     * Rows (token × chosen slot) routed to each expert, indexed by expert id, by the ids read at node group
     * {@code group} of graph {@code graphSeq} (the first MUL_MAT_ID group reading that ids tensor); null when no
     * ids were read there (the MoE layer off, the read lost or failed). The array is the MoE layer's: read it,
     * do not keep it. A read cut short by the probes' bound holds fewer rows than the node computed.
     */
    long[] rowsPerExpert(long graphSeq, int group);
}
