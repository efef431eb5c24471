package dev.infertop.model;

/**
 * The tags of the latency histograms a run keeps (the HdrHistogram log's tags, the snapshot's, the metrics' and
 * the diff's keys): written by the aggregators and read back by every reader, so named once here.
 */
public final class HistogramTag {
    /** Time to the first token, per request. */
    public static final String TTFT = "ttft";
    /** Time per output token, per decode step. */
    public static final String TPOT = "tpot";
    /** The prefix of an operator's node-group latencies: {@code op:MUL_MAT}. */
    public static final String OP_PREFIX = "op:";

    private HistogramTag() {}

    /** The tag of operator {@code name}'s latencies. */
    public static String op(String name) {
        return OP_PREFIX + name;
    }
}
