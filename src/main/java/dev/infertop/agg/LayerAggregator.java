package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.Limits;
import dev.infertop.model.Snapshot;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * A layer's aggregator as {@link TraceAggregator} sees it: registered once, then iterated at each stage (the
 * record kinds it takes, following the CPU graphs, keeping timelines, the run's end, each snapshot's figures), so
 * that the trace aggregator holds one list instead of a field and a call per layer per stage. Collector thread
 * only, like the records.
 */
public interface LayerAggregator {
    /** The layer whose figures this aggregates (the status that says whether it runs is that layer's). */
    Layer layer();

    /**
     * The listener for its records of {@code kind} (an {@code EventLayout.EVENT_} constant), or null when it takes
     * none of them: the decoder then calls it directly, once per record.
     */
    default TraceListener records(int kind) {
        return null;
    }

    /** Listens to the CPU graphs the operator layer assembles; called once, when there are any. */
    default void followGraphs(CpuGraphAssembler graphs) {}

    /** The CPU graph walk this layer assembles and every other layer may follow (the operator layer's), or null. */
    default CpuGraphAssembler graphWalk() {
        return null;
    }

    /** The table of the target's threads this layer keys its figures by, or null: pruned between ticks. */
    default ThreadSlots threadSlots() {
        return null;
    }

    /** The run starts at {@code nowNs} (its first tick, no snapshot). */
    default void start(long nowNs) {}

    /** A tick at {@code nowNs} closes the interval: first of every stage of a snapshot, before the run's end. */
    default void closeInterval(long nowNs) {}

    /** Records its own kinds into {@code flight} (its histograms into {@code histograms}) from now on; null: none. */
    default void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {}

    /** The run ended: what is still open is finished before the last snapshot. */
    default void finishRun() {}

    /** At each tick, before the snapshot's figures are taken: what it publishes per tick. */
    default void tick() {}

    /** The interval's figures with this layer's added ({@code figures} already holds the operator layer's). */
    default Figures addInterval(Figures figures) {
        return figures;
    }

    /** The run's figures with this layer's added ({@code figures} already holds the operator layer's). */
    default Figures addTotal(Figures figures) {
        return figures;
    }

    /**
     * The snapshot with this layer's part that is not among its figures added (the MoE layer's heatmap);
     * {@code layerOn}: whether its layer is switched on now. Called once a tick, after the figures.
     */
    default Snapshot addToSnapshot(Snapshot snapshot, boolean layerOn) {
        return snapshot;
    }

    /** This layer's bounded tables as the snapshot's limits report them, run so far (after addToSnapshot). */
    default List<Limits.Bound> bounds() {
        return List.of();
    }

    /** Whether the collector should drain the ring soon: this layer waits for what only its records can give. */
    default boolean wantsPromptDrain() {
        return false;
    }

    /**
     * Hands {@code reader} this layer's run latency histograms (values in ns) by their interval-log tags; they
     * change with the next record, so a reader copies what it keeps.
     */
    default void forEachRunHistogram(BiConsumer<String, Histogram> reader) {}
}
