package dev.infertop.model;

/**
 * What the collector kept of what the target chose, and what it dropped to stay within its bounds (memory is
 * bounded by design: the target names its tensors and layers). Each {@code *Dropped}/{@code *Folded} count is
 * of the run so far; zero in any real model.
 *
 * @param tensorNames          distinct tensor (and culprit task) names kept
 * @param tensorNamesCap       the most kept (event.NameTable.MAX_NAMES)
 * @param nameRecordsDropped   records whose name was new once the cap was reached (shown without a name)
 * @param tensorGroups         tensor groups ("blk.N ffn", …) kept, each with its histograms
 * @param tensorGroupsCap      the most kept (agg.OperatorAggregator.MAX_TENSOR_GROUPS)
 * @param tensorNamesFolded    distinct names whose group was past the cap: counted under "other"
 * @param moeLayersCap         model layers the MoE layer keeps (agg.MoeAggregator.MAX_LAYERS)
 * @param moeReadsDropped      expert-id reads of a layer at or past that cap, dropped
 */
public record Limits(int tensorNames, int tensorNamesCap, long nameRecordsDropped, int tensorGroups,
                     int tensorGroupsCap, long tensorNamesFolded, int moeLayersCap, long moeReadsDropped) {
    /** Nothing known (a replayed snapshot, a test). */
    public static final Limits NONE = new Limits(0, 0, 0, 0, 0, 0, 0, 0);

    /** Everything dropped or folded, for a one-word warning. */
    public long droppedTotal() {
        return nameRecordsDropped + tensorNamesFolded + moeReadsDropped;
    }
}
