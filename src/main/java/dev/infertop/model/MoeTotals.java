package dev.infertop.model;

import java.util.List;

/**
 * The MoE layer's view of one tick: which experts each layer routed tokens to, over a sliding window of the
 * last {@code windowTicks} intervals and over the whole run, prefill and decode apart; per-expert figures;
 * and how complete the reading was (bound, truncations, graphs whose ids could not be read).
 *
 * <p>Arrays are [layer][expert] (model layers as named by the tensors, "ffn_moe_*-L"); rows are tokens
 * (one routed token = one row of the ids tensor, selecting {@code expertsUsed} experts).
 *
 * @param windowPrefill      selections per layer × expert in prefill batches (n_tokens > 1), sliding window
 * @param windowDecode       the same for decode steps (n_tokens = 1)
 * @param windowRowsPrefill  tokens read per layer in the window, prefill
 * @param windowRowsDecode   tokens read per layer in the window, decode
 * @param totalPrefill       selections per layer × expert over the run, prefill
 * @param totalDecode        the same, decode
 * @param totalRowsPrefill   tokens read per layer over the run, prefill
 * @param totalRowsDecode    tokens read per layer over the run, decode
 * @param rowsUnreadByLayer  tokens per layer that ran in MoE nodes whose ids were not read (no plan yet,
 *                           read failure, lost record) or were cut by the bound: read + unread = ran
 * @param experts            per-expert latency and reuse figures over the run (all layers)
 * @param cvByLayer          imbalance per layer over the window (both phases): coefficient of variation of
 *                           its experts' selection counts (population standard deviation / mean); NaN if none
 * @param idBytesBound       bytes of ids copied per MUL_MAT_ID node at most (the bound)
 * @param nodesRead          MUL_MAT_ID ids tensors read over the run
 * @param nodesTruncated     of those, how many had more ids than the bound (their tail rows are unread)
 * @param rowsTruncated      tokens cut off by the bound over the run
 * @param graphsWithoutIds   MoE graphs over the run in which at least one planned read is missing
 * @param readFailures       ids reads that failed in the probe (tensor or data unreadable)
 * @param idBytesCopied      bytes of ids copied over the run (the layer's cost, with {@code nodesRead})
 * @param nodesReadFromHostCopies of {@code nodesRead}, those read from the host copy ggml's scheduler made of ids
 *                           a device computed (experts computed on the device from host memory)
 */
public record MoeTotals(
        boolean active,
        int windowTicks,
        int expertsUsed,
        long[][] windowPrefill,
        long[][] windowDecode,
        long[] windowRowsPrefill,
        long[] windowRowsDecode,
        long[][] totalPrefill,
        long[][] totalDecode,
        long[] totalRowsPrefill,
        long[] totalRowsDecode,
        long[] rowsUnreadByLayer,
        List<ExpertStats> experts,
        double[] cvByLayer,
        int idBytesBound,
        long nodesRead,
        long nodesTruncated,
        long rowsTruncated,
        long graphsWithoutIds,
        long readFailures,
        long idBytesCopied,
        long nodesReadFromHostCopies) {

    public static final MoeTotals EMPTY = new MoeTotals(false, 0, 0, new long[0][], new long[0][], new long[0],
            new long[0], new long[0][], new long[0][], new long[0], new long[0], new long[0], List.of(), new double[0],
            0, 0, 0, 0, 0, 0, 0, 0);

    /**
     * Per expert, all layers together.
     *
     * @param activeNodes      MoE nodes (one per layer and batch) in which the expert got at least one token
     * @param nodeP50Ms        median time of those nodes: the layer's MUL_MAT_ID node groups (gate, up, down
     *                         experts), barrier release to release; all selected experts run inside it at once
     * @param nodeP99Ms        99th percentile of the same
     * @param rowShareMs       the expert's share of MoE node time, split by routed rows: Σ node time × (rows to
     *                         this expert / rows to all experts)
     * @param meanReuseTokens  mean tokens between two activations in the same layer (1 = consecutive tokens);
     *                         NaN when never reused
     * @param tokensSinceLast  tokens since its last activation, fewest over layers; -1 when never active
     */
    public record ExpertStats(int expert, long activeNodes, double nodeP50Ms, double nodeP99Ms, double rowShareMs,
                              double meanReuseTokens, long tokensSinceLast) {}

    /**
     * Layer × expert series exported at most (Prometheus, one per pair): layers (from tensor names, up to 128)
     * and experts (from the ids, up to 1024) are the target's, and 128 × 1024 series would swamp a scrape.
     * 32768 holds every released MoE model whole (61 layers × 384 experts, 48 × 512).
     */
    public static final int SERIES_CAP = 32768;

    /**
     * Experts of each layer exported as series of their own: all of them while layers × experts fit
     * {@link #SERIES_CAP}, else the first {@code SERIES_CAP / layers}; each layer's others are summed in one
     * series labelled {@link Other#NAME}.
     */
    public int seriesExperts() {
        int layers = layerCount();
        int experts = expertCount();
        return layers == 0 ? experts : Math.min(experts, SERIES_CAP / layers);
    }

    /** Layer × expert pairs exported as series of their own. */
    public long seriesKept() {
        return (long) layerCount() * seriesExperts();
    }

    /** Layer × expert pairs summed into their layer's "other" series instead. */
    public long seriesFolded() {
        return (long) layerCount() * (expertCount() - seriesExperts());
    }

    public int layerCount() {
        return Math.max(totalPrefill.length, totalDecode.length);
    }

    public int expertCount() {
        int experts = 0;
        for (long[] row : totalPrefill) {
            experts = Math.max(experts, row.length);
        }
        for (long[] row : totalDecode) {
            experts = Math.max(experts, row.length);
        }
        return experts;
    }

    /** Selection frequency (selections / tokens, 0..1) of an expert in a layer from counts and rows. */
    public static double frequency(long[][] counts, long[] rows, int layer, int expert) {
        if (layer >= counts.length || expert >= counts[layer].length || layer >= rows.length || rows[layer] == 0) {
            return 0;
        }
        return (double) counts[layer][expert] / rows[layer];
    }

    /** Mean of the per-layer CVs that are defined; NaN when none is. */
    public double meanCv() {
        double sum = 0;
        int n = 0;
        for (double cv : cvByLayer) {
            if (!Double.isNaN(cv)) {
                sum += cv;
                n++;
            }
        }
        return n == 0 ? Double.NaN : sum / n;
    }

    /** Tokens each expert got in a layer over the run, prefill and decode together (the report's counts). */
    public long[] runCounts(int layer) {
        long[] counts = new long[expertCount()];
        for (long[][] phase : new long[][][] {totalPrefill, totalDecode}) {
            if (layer < phase.length) {
                for (int e = 0; e < phase[layer].length && e < counts.length; e++) {
                    counts[e] += phase[layer][e];
                }
            }
        }
        return counts;
    }
}
