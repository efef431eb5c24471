package dev.infertop.agg;

import dev.infertop.model.BackendTotals;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.OpEstimate;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class OpEstimatorTest {
    private static final long MS = 1_000_000L;

    private static OpTotals op(String name, long groups, long wallNs) {
        return new OpTotals(name, groups, groups, wallNs, wallNs, 0, LatencySummary.EMPTY, "");
    }

    private static OperatorTotals operators(long graphs, OpTotals... ops) {
        return new OperatorTotals(List.of(ops), List.of(), graphs, 0);
    }

    /**
     * A window traced 10 graphs (MUL_MAT 100 groups in 60 ms, ADD 50 in 20 ms): the interval after it, with 30
     * CPU graphs busy 240 ms and none traced, is estimated at 30 × 10 = 300 MUL_MAT groups and 240 × 60/80 =
     * 180 ms; the run sums both. With every graph traced, the estimate is the traced figures.
     */
    @Test
    void untracedGraphsTakeTheWindowsFiguresPerGraph() {
        OpEstimator estimator = new OpEstimator();
        OperatorTotals window = operators(10, op("MUL_MAT", 100, 60 * MS), op("ADD", 50, 20 * MS));
        OperatorTotals[] first = estimator.estimate(window, window, new BackendTotals("CPU", 10, 0, 80 * MS));
        assertEquals(List.of(new OpEstimate("MUL_MAT", 100, 60 * MS), new OpEstimate("ADD", 50, 20 * MS)),
                first[0].estimated(), "every graph traced: the traced figures");

        OperatorTotals[] gap = estimator.estimate(OperatorTotals.EMPTY, window, new BackendTotals("CPU", 30, 0, 240 * MS));
        assertEquals(List.of(new OpEstimate("MUL_MAT", 300, 180 * MS), new OpEstimate("ADD", 150, 60 * MS)),
                gap[0].estimated());
        assertEquals(List.of(new OpEstimate("MUL_MAT", 400, 240 * MS), new OpEstimate("ADD", 200, 80 * MS)),
                gap[1].estimated(), "the run: the sum of the intervals");
    }

    @Test
    void withoutAnyWindowNothingIsEstimated() {
        OperatorTotals[] none = new OpEstimator().estimate(OperatorTotals.EMPTY, OperatorTotals.EMPTY,
                new BackendTotals("CPU", 30, 0, 240 * MS));
        assertEquals(List.of(), none[0].estimated());
        assertEquals(List.of(), none[1].estimated());
    }
}
