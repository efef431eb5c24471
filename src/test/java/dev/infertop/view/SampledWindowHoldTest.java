package dev.infertop.view;

import dev.infertop.model.Figures;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class SampledWindowHoldTest {
    private static final BudgetStatus SAMPLING = new BudgetStatus(1, 0.9, 3.2, 0.25, "1.0 s of every 4.0 s");

    private static Snapshot gap(Snapshot traced) {
        Figures off = Fixtures.snapshot(LayerStatus.State.OFF).interval();
        return traced.withInterval(traced.interval().withOperatorFiguresOf(off).withOperators(off.operators()))
                .withBudget(SAMPLING);
    }

    @Test
    void betweenWindowsTheLastWindowsTableStays() {
        SampledWindowHold hold = new SampledWindowHold();
        Snapshot traced = Fixtures.snapshot(LayerStatus.State.ON).withBudget(SAMPLING);
        assertSame(traced, hold.apply(traced));
        Snapshot shown = hold.apply(gap(traced));
        assertEquals(traced.interval().operators().ops(), shown.interval().operators().ops());
        assertEquals(traced.interval().operators().threads(), shown.interval().operators().threads());
        assertEquals(gap(traced).interval().operators().lanes(), shown.interval().operators().lanes(),
                "the lanes are the interval's own: a strip of the last seconds, never held");
        assertEquals(gap(traced).interval().operators().sampled(), shown.interval().operators().sampled(),
                "the clock samples are the interval's own");
        assertEquals(traced.interval().roofline(), shown.interval().roofline());
        assertEquals(gap(traced).total(), shown.total(), "the run's totals are left as they are");
    }

    @Test
    void withoutSamplingAnEmptyIntervalStaysEmpty() {
        SampledWindowHold hold = new SampledWindowHold();
        Snapshot traced = Fixtures.snapshot(LayerStatus.State.ON);
        hold.apply(traced.withBudget(new BudgetStatus(1, 0.5, 0.5, 1, "every graph")));
        Snapshot empty = gap(traced).withBudget(new BudgetStatus(1, 0.5, 0.5, 1, "every graph"));
        assertEquals(OperatorTotals.EMPTY, hold.apply(empty).interval().operators(),
                "every graph traced: an interval without one had none");
        Snapshot off = gap(traced).withBudget(new BudgetStatus(1, 0.5, 0.5, 0, "operator layer off"));
        assertEquals(OperatorTotals.EMPTY, hold.apply(off).interval().operators(), "the layer off: nothing held");
        Snapshot ended = gap(traced).withState(RunState.EXITED);
        assertEquals(OperatorTotals.EMPTY, hold.apply(ended).interval().operators(), "a final snapshot is the run's");
    }

    /** Between windows the held figures say how old they are: 12 s after the window, "window 12 s ago". */
    @Test
    void heldFiguresSayHowOldTheyAre() {
        long[] nowNs = {5_000_000_000L};
        SampledWindowHold hold = new SampledWindowHold(() -> nowNs[0]);
        Snapshot traced = Fixtures.snapshot(LayerStatus.State.ON).withBudget(SAMPLING);
        assertEquals("", hold.apply(traced).budget().heldWindowText(), "this interval's own figures");
        nowNs[0] += 12_000_000_000L;
        Snapshot shown = hold.apply(gap(traced));
        assertEquals("window 12 s ago", shown.budget().heldWindowText());
        assertEquals(" 1s/4.0s", shown.budget().windowsText(), "the header's layers line: no age, the panels say it");
    }
}
