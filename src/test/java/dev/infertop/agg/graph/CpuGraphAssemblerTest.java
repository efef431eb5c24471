package dev.infertop.agg.graph;

import dev.infertop.agg.GraphFixture;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CPU graph assembled once and read by every listener: groups, the barrier rule, per-node times. */
class CpuGraphAssemblerTest {
    private static final int NONE = 0, ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 4, VIEW = 5;
    private static final int COMPUTE = 16;
    private final CpuGraphAssembler graphs = new CpuGraphAssembler(GraphFixture.naming(
            List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW"), COMPUTE, Set.of(NONE, VIEW)));
    private final GraphFixture fixture = new GraphFixture(graphs);

    /** What a listener saw of each graph, copied during the call (the graph is reused after it). */
    private record Seen(long seq, CpuGraph.Status status, List<String> groups, List<Long> wallNs, List<Long> nodeWallNs,
                        long src1OfNode0, long ne0OfNode0, int typeOfNode0) {}

    private final List<Seen> first = new ArrayList<>();
    private final List<Seen> second = new ArrayList<>();
    private final List<CpuGraph> instances = new ArrayList<>();

    CpuGraphAssemblerTest() {
        graphs.addListener(graph -> first.add(seen(graph)));
        graphs.addListener(graph -> {
            second.add(seen(graph));
            instances.add(graph);
        });
    }

    private static Seen seen(CpuGraph graph) {
        List<String> groups = new ArrayList<>();
        List<Long> wall = new ArrayList<>();
        for (int k = 0; k < graph.groupCount(); k++) {
            groups.add(graph.groupOpNames()[k]);
            wall.add(graph.groupWallNs(k));
        }
        List<Long> nodeWall = new ArrayList<>();
        if (graph.attributed()) {
            for (int i = 0; i < graph.nodeCount(); i++) {
                nodeWall.add(graph.nodeWallNs(i));
            }
        }
        boolean known = graph.nodesKnown();
        return new Seen(graph.seq(), graph.status(), groups, wall, nodeWall, known ? graph.src(0, 1) : -1,
                known ? graph.ne(0, 0) : -1, known ? graph.type(0) : -1);
    }

    /** 0 MUL_MAT, 1 VIEW (skipped), 2 RMS_NORM + 3 MUL (fused), 4 ADD. */
    private void graph(long seq) {
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD};
        for (int i = 0; i < ops.length; i++) {
            graphs.onNode(seq, 0, i, ops.length, 0x1000 + i, ops[i], 7, COMPUTE, 0, 16, 2, 1, 1, 0xa, 0xb, 0xc, -1);
        }
        fixture.fused(7, seq, 2, 0x1002, 0x1003);
    }

    @Test
    void everyListenerSeesTheSameGraphWithGroupsAndWallTimesByTheBarrierRule() {
        graph(1);
        fixture.arrivals(7, 1, 0, 100, 130, 200, 210);
        fixture.arrivals(8, 1, 10, 120, 125, 190, 210);
        fixture.finish();
        // releases 120, 130, 200 after the earliest start 0
        Seen expected = new Seen(1, CpuGraph.Status.ATTRIBUTED, List.of("MUL_MAT", "RMS_NORM+MUL", "ADD"),
                List.of(120L, 10L, 70L), List.of(120L, 0L, 5L, 5L, 70L), 0xb, 16, 7);
        assertEquals(List.of(expected), first);
        assertEquals(first, second, "one assembly, every listener the same figures");
    }

    @Test
    void theGraphIsAssembledIntoTheSameObjectEveryTime() {
        graph(1);
        fixture.arrivals(7, 1, 0, 100, 130, 200, 210);
        fixture.same(2, 1, 1000);
        fixture.arrivals(7, 2, 1000, 1100, 1130, 1200, 1210);
        fixture.finish();
        assertEquals(2, instances.size());
        assertSame(instances.get(0), instances.get(1), "reused, not reallocated per graph");
        assertEquals(List.of("MUL_MAT", "RMS_NORM+MUL", "ADD"), second.get(1).groups(), "the reused graph's fusion");
    }

    @Test
    void aGraphBegunByAnotherLayersRecordKeepsItsNodesAndArrivals() {
        graphs.onGraphStart(1, 0); // the MoE layer's graph record comes before the nodes
        graph(1);
        fixture.arrivals(7, 1, 0, 100, 130, 200, 210);
        graphs.onGraphStart(2, 500);
        assertEquals(CpuGraph.Status.ATTRIBUTED, first.getFirst().status());
        assertEquals(2, graphs.latestSeq());
        fixture.finish();
        assertEquals(CpuGraph.Status.NOT_READ, first.get(1).status(), "graph 2: no node record came");
    }

    @Test
    void unattributedAndInFlightGraphsAreToldToo() {
        graph(1);
        fixture.arrivals(7, 1, 0, 10);       // 1 arrival for 3 groups
        graph(2);                            // no thread reported before tracing stopped
        fixture.finish();
        assertEquals(List.of(CpuGraph.Status.UNATTRIBUTED, CpuGraph.Status.IN_FLIGHT),
                first.stream().map(Seen::status).toList());
        assertTrue(first.get(0).groups().isEmpty(), "no groups without attribution");
        assertTrue(first.get(1).groups().isEmpty());
    }
}
