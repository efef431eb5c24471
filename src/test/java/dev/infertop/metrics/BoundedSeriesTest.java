package dev.infertop.metrics;

import dev.infertop.model.Layer;
import dev.infertop.agg.Routers;
import dev.infertop.agg.BackendKeys;
import dev.infertop.agg.GraphFixture;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.agg.ThreadSlots;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.NameTable;
import dev.infertop.model.BackendNames;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exposition of a run whose target chose every label anew (a thousand backend GUIDs, three hundred
 * threads, a thousand op ids, 128 MoE layers × 1024 experts): each family has at most its cap's series plus
 * one labelled "other", and "other" holds the rest of the run's figures.
 */
class BoundedSeriesTest {
    private static final int COMPUTE = 16;

    private static long series(String exposition, String family) {
        return exposition.lines().filter(l -> l.startsWith(family + "{") || l.startsWith(family + " ")).count();
    }

    @Test
    void everyFamilyStaysWithinItsCapPlusOther() throws Exception {
        NameTable names = new NameTable();
        OperatorAggregator operators = new OperatorAggregator(
                GraphFixture.naming(List.of("MUL_MAT"), COMPUTE, Set.of()), names);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), operators).withNames(names);
        GraphFixture graphs = new GraphFixture(operators);
        aggregator.start(0);
        long clock = 1_000_000;
        int threads = ThreadSlots.MAX_THREADS + 44;
        int opId = 1000;
        for (int g = 1; g <= 1000; g++) {
            aggregator.onGraphCompute(7, clock, clock + 500, 0xb000, 0x1000L + g, g, 2, 0);
            // Two nodes of new op ids, run by one of 300 threads that all live on.
            graphs.node(g, clock, 0, 0x10_0000L, opId++, COMPUTE, 8, 1, 1, 1, 0, 0, 0, -1);
            graphs.node(g, clock, 1, 0x10_0001L, opId++, COMPUTE, 8, 1, 1, 1, 0, 0, 0, -1);
            graphs.arrivals(100 + g % threads, g, clock, clock + 100, clock + 300);
            clock += 1_000;
        }
        graphs.finish();
        MetricsFeed feed = new MetricsFeed(null, frame -> { }, aggregator::forEachRunHistogram, 1_700_000_000_000L,
                notice -> { });
        long[][] wide = new long[128][1024];
        for (long[] layer : wide) {
            java.util.Arrays.fill(layer, 1);
        }
        MoeTotals moe = new MoeTotals(true, 10, 8, wide, wide, new long[128], new long[128], wide, wide,
                new long[128], new long[128], new long[128], List.of(), new double[128], 16384, 1, 0, 0, 0, 0, 8, 0);
        Snapshot s = aggregator.snapshot(clock, RunState.RUNNING, new TargetInfo(1, "hostile", null, List.of()), 0,
                List.of(new LayerStatus(Layer.OPERATOR, LayerStatus.State.ON, "", List.of())))
                .withMoe(moe);
        String text = MetricsMappingTest.openMetrics(feed.capture(s));

        assertEquals(BackendKeys.MAX_BACKENDS + 1, series(text, "infertop_graph_computes_total"));
        assertTrue(text.contains("infertop_graph_computes_total{backend=\"other\"} 984.0"), text.lines()
                .filter(l -> l.startsWith("infertop_graph_computes_total")).toList().toString());
        assertEquals(ThreadSlots.MAX_THREADS + 1, series(text, "infertop_thread_work_seconds_total"));
        assertTrue(text.contains("infertop_thread_work_seconds_total{thread=\"other\"}"));
        long opSeries = series(text, "infertop_op_duration_seconds_count");
        assertEquals(CpuGraphAssembler.MAX_OP_NAMES + 1, opSeries);
        assertTrue(text.contains("infertop_op_duration_seconds_count{backend=\"CPU\",op=\"other\"} "
                + (2000 - CpuGraphAssembler.MAX_OP_NAMES)), "2000 groups, each of a new op id");
        // 128 layers × 1024 experts: 256 experts of each layer as series of their own, the rest as "other".
        long moeSeries = series(text, "infertop_moe_expert_selections_total");
        assertEquals(MoeTotals.SERIES_CAP + 128, moeSeries);
        assertTrue(text.contains("infertop_moe_expert_selections_total{expert=\"other\",layer=\"127\"} 1536.0"),
                "768 experts × 2 phases, summed");
        assertEquals(128L * 768, s.withMoe(moe).moe().seriesFolded());
    }
}
