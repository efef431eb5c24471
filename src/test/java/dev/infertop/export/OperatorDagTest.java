package dev.infertop.export;

import dev.infertop.model.GraphNode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hand-made graph with two branches of known times:
 * <pre>
 *   W1(leaf) ─┐
 *   X(leaf) ──▶ a:MUL_MAT 5 ─▶ c:ROPE 1 ─┐
 *          └─▶ b:MUL_MAT 3 ─▶ v:VIEW 0 ─▶ d:ADD 2 ─▶ e:MUL_MAT 4
 *   W2(leaf) ─┘                         ┘
 * </pre>
 * Paths into d: a→c (6) and b→v (3); so the critical path is a, c, d, e = 12 ns.
 */
class OperatorDagTest {
    static final long X = 0x1000, W1 = 0x2000, W2 = 0x3000;
    static final long A = 0xa0, B = 0xb0, C = 0xc0, V = 0xd0, D = 0xe0, E = 0xf0;

    static GraphNode node(int index, long tensor, String op, long timeNs, long... sources) {
        List<Long> src = new java.util.ArrayList<>();
        for (long s : sources) {
            src.add(s);
        }
        while (src.size() < 3) {
            src.add(0L);
        }
        return new GraphNode(index, tensor, op, op.toLowerCase() + "-" + index, List.of(4L, 1L, 1L, 1L), src, timeNs,
                !op.equals("VIEW"));
    }

    static List<GraphNode> graph() {
        return List.of(
                node(0, A, "MUL_MAT", 5, W1, X),
                node(1, B, "MUL_MAT", 3, W2, X),
                node(2, C, "ROPE", 1, A),
                node(3, V, "VIEW", 0, B),
                node(4, D, "ADD", 2, C, V),
                node(5, E, "MUL_MAT", 4, W1, D));
    }

    @Test
    void edgesComeFromSourceAddressesAndOutsideSourcesAreLeaves() {
        OperatorDag dag = OperatorDag.of(graph());
        assertEquals(List.of(W1, X, W2), dag.leaves());
        assertArrayEquals(new int[] {}, dag.nodeSources(0));
        assertArrayEquals(new int[] {0, 1}, dag.leafSources(0));
        assertArrayEquals(new int[] {2, 1}, dag.leafSources(1));
        assertArrayEquals(new int[] {0}, dag.nodeSources(2));
        assertArrayEquals(new int[] {2, 3}, dag.nodeSources(4));
        assertArrayEquals(new int[] {4}, dag.nodeSources(5));
        assertArrayEquals(new int[] {0}, dag.leafSources(5));
    }

    @Test
    void criticalPathIsTheLongestByMeasuredTime() {
        OperatorDag dag = OperatorDag.of(graph());
        assertEquals(List.of(0, 2, 4, 5), dag.criticalPath());
        assertEquals(12, dag.criticalPathNs());
        assertEquals(15, dag.totalNs());
        assertTrue(dag.onCriticalPath(2));
        assertFalse(dag.onCriticalPath(1));
        assertFalse(dag.onCriticalPath(3));
        assertTrue(dag.criticalEdge(2, 4));
        assertFalse(dag.criticalEdge(3, 4));
    }

    @Test
    void aSlowerOtherBranchMovesThePath() {
        List<GraphNode> nodes = new java.util.ArrayList<>(graph());
        nodes.set(1, node(1, B, "MUL_MAT", 9, W2, X)); // b→v→d is now 9 > 6
        OperatorDag dag = OperatorDag.of(nodes);
        assertEquals(List.of(1, 3, 4, 5), dag.criticalPath());
        assertEquals(15, dag.criticalPathNs());
    }

    @Test
    void emptyGraphHasNoPath() {
        OperatorDag dag = OperatorDag.of(List.of());
        assertEquals(List.of(), dag.criticalPath());
        assertEquals(0, dag.criticalPathNs());
    }
}
