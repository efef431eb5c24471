package dev.infertop.view;

import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Figures;
import dev.infertop.model.Snapshot;

/**
 * While the overhead budget samples the operator layer in windows, most intervals have no traced graph: the
 * live view keeps showing the operator figures (table, roofline) of the last interval that had some instead of an
 * empty table (the header shows the windows: "operator on 1s/7.8s"). The JSON lines and the run's totals are left as they are.
 * Called on the collector thread, one snapshot at a time.
 */
public final class SampledWindowHold {
    private final java.util.function.LongSupplier clockNs;
    private Figures lastSampled;
    private long lastSampledAtNs;

    public SampledWindowHold() {
        this(System::nanoTime);
    }

    /** {@code clockNs}: when each snapshot is shown (a test's clock). */
    public SampledWindowHold(java.util.function.LongSupplier clockNs) {
        this.clockNs = clockNs;
    }

    /**
     * {@code s}, or {@code s} with the last sampled interval's operator figures where it has none, their age in
     * its budget status ("window 12 s ago": {@link dev.infertop.model.BudgetStatus#heldWindowText}).
     */
    public Snapshot apply(Snapshot s) {
        if (s.interval().operators().graphsAttributed() > 0) {
            lastSampled = s.interval();
            lastSampledAtNs = clockNs.getAsLong();
            return s;
        }
        double share = s.budget().arrivalShare();
        if (lastSampled == null || s.isFinal() || !s.budget().present() || share <= 0 || share >= 1
                || !operatorLayerOn(s)) {
            return s; // every graph traced, or the layer off: an interval without graphs had none
        }
        double ageS = (clockNs.getAsLong() - lastSampledAtNs) / 1e9;
        return s.withInterval(s.interval().withOperatorFiguresOf(lastSampled))
                .withBudget(s.budget().withHeldWindowAge(ageS));
    }

    private static boolean operatorLayerOn(Snapshot s) {
        return s.layers().stream().anyMatch(l -> l.layer() == Layer.OPERATOR
                && (l.state() == LayerStatus.State.ON
                || l.state() == LayerStatus.State.PARTIAL));
    }
}
