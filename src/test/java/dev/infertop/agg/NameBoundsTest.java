package dev.infertop.agg;

import dev.infertop.model.BackendNames;
import dev.infertop.event.EventDecoder;
import dev.infertop.event.NameTable;
import dev.infertop.event.RecordWriter;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Limits;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.TensorGroup;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target that names every node anew: a million distinct tensor names, in the probes' own record bytes,
 * through the decoder and the aggregators the collector runs. What is kept stays under the caps, and what is
 * dropped is counted and reported in the snapshot.
 */
class NameBoundsTest {
    private static final int MUL_MAT = 1, COMPUTE = 16;
    private static final int NODES_PER_GRAPH = 1000;
    private static final int GRAPHS = 1000;

    private final OpNaming naming = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return op == MUL_MAT ? "MUL_MAT" : "NONE";
        }

        @Override
        public boolean isEmpty(int op) {
            return op != MUL_MAT;
        }

        @Override
        public int computeFlag() {
            return COMPUTE;
        }
    };

    @Test
    void aMillionDistinctTensorNamesStayUnderTheCapsAndTheDropsAreCounted() {
        NameTable names = new NameTable();
        OperatorAggregator operators = new OperatorAggregator(naming, names);
        TraceAggregator aggregator = Routers.of(BackendNames.parse(""), operators)
                .withNames(names);
        EventDecoder decoder = new EventDecoder(aggregator, names);
        long[] arrivals = new long[NODES_PER_GRAPH + 1];
        long nowNs = 1_000_000;
        try (RecordWriter records = new RecordWriter(decoder)) {
            for (int graph = 0; graph < GRAPHS; graph++) {
                long seq = graph + 1;
                records.cpuGraph(7, nowNs, nowNs + 1_000_000, 0xa000, NODES_PER_GRAPH);
                for (int i = 0; i < NODES_PER_GRAPH; i++) {
                    int n = graph * NODES_PER_GRAPH + i;
                    // "Kcur-N" names layer N: each name a new tensor group too ("blk.N attention").
                    records.node(seq, nowNs, i, NODES_PER_GRAPH, 0x10_0000L + 64L * i, MUL_MAT, 0, COMPUTE, 0,
                            new long[] {8, 1, 1, 1}, new long[] {0x20_0000L, 0x30_0000L}, "Kcur-" + n);
                }
                for (int k = 0; k < arrivals.length; k++) {
                    arrivals[k] = nowNs + 100L * (k + 1);
                }
                records.arrivals(7, seq, nowNs, 0, arrivals, arrivals.length);
                nowNs += 1_000_000;
            }
        }
        operators.finishLastGraph();
        Snapshot snapshot = aggregator.snapshot(nowNs, RunState.EXITED, new TargetInfo(1, "hostile", null, List.of()), 0,
                List.of(new LayerStatus(Layer.OPERATOR, LayerStatus.State.ON, "", List.of())));

        Limits limits = snapshot.limits();
        int total = GRAPHS * NODES_PER_GRAPH;
        assertEquals(NameTable.MAX_NAMES, names.size(), "names kept");
        assertEquals(NameTable.MAX_NAMES, limits.value("tensor_names"));
        assertEquals(total - NameTable.MAX_NAMES, limits.value("name_records_dropped"), "every record past the cap counted");
        assertTrue(limits.value("tensor_groups") <= OperatorAggregator.MAX_TENSOR_GROUPS + 1, limits.value("tensor_groups") + " groups");
        assertEquals(OperatorAggregator.MAX_TENSOR_GROUPS, operators.totals(List.of()).tensorGroups().stream()
                .filter(g -> !g.op().equals(TensorGroup.OTHER)).count());
        // Names kept whose group was past the cap; the dropped names' nodes (id -1) go to "other" uncounted here.
        assertEquals(NameTable.MAX_NAMES - OperatorAggregator.MAX_TENSOR_GROUPS, limits.value("tensor_names_folded"));
        assertTrue(limits.droppedTotal() > 0);
        // Every node was still attributed: time is kept, only names are not.
        assertEquals(total, operators.totals(List.of()).ops().stream().mapToLong(o -> o.nodes()).sum());
    }
}
