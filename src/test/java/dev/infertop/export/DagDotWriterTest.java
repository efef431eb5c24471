package dev.infertop.export;

import dev.infertop.io.FileAccess;
import dev.infertop.io.Umask;
import dev.infertop.model.GraphNode;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The DOT written for OperatorDagTest's graph, read back: nodes, leaves, edges, critical marks. */
class DagDotWriterTest {
    @TempDir
    Path dir;

    @Test
    void dotReadsBackAsTheSameGraph() throws IOException {
        OperatorDag dag = OperatorDag.of(OperatorDagTest.graph());
        Path file = dir.resolve("dag.dot");
        DagDotWriter.write(dag, file);
        DotFile dot = DotFile.parse(Files.readString(file));

        assertEquals("6", dot.graph.get("nodes"));
        assertEquals("12", dot.graph.get("critical_path_ns"));
        assertEquals(9, dot.nodes.size()); // 6 nodes, 3 leaves
        Map<String, String> rope = dot.nodes.get("n2");
        assertEquals("ROPE", rope.get("op"));
        assertEquals("rope-2", rope.get("tensor_name"));
        assertEquals("[4,1,1,1]", rope.get("ne"));
        assertEquals("1", rope.get("time_ns"));
        assertEquals("ROPE\nrope-2\n[4,1,1,1]\n0.0 µs", rope.get("label").replace("\\n", "\n"));
        assertEquals("1.500 ms", DagDotWriter.time(1_500_000));
        assertEquals("12.3 µs", DagDotWriter.time(12_345));
        assertEquals("true", rope.get("critical"));
        assertEquals("false", dot.nodes.get("n1").get("critical"));
        assertEquals("false", dot.nodes.get("n3").get("executed"));
        assertEquals("true", dot.nodes.get("l0").get("leaf"));
        assertEquals("0x2000", dot.nodes.get("l0").get("tensor"));
        assertEquals(List.of("n2", "n3"), dot.sourcesOf("n4"));
        assertEquals(List.of("l0", "n4"), dot.sourcesOf("n5"));
        assertEquals(List.of("n2"), dot.consumersOf("n0"));
        assertEquals(10, dot.edges.size());
        long red = dot.edges.stream().filter(e -> e[2].contains("color=red")).count();
        assertEquals(3, red); // a→c, c→d, d→e
    }

    @Test
    void leavesCarryTheNamesReadForThem() {
        var mulMat = new GraphNode(0, 0xa0, "MUL_MAT", "Qcur-0", List.of(4L, 1L, 1L, 1L),
                List.of(0x2000L, 0x1000L, 0L), 5, true, List.of("blk.0.attn_q.weight", "", ""));
        DotFile dot = DotFile.parse(DagDotWriter.toDot(OperatorDag.of(List.of(mulMat))));
        assertEquals("blk.0.attn_q.weight", dot.nodes.get("l0").get("tensor_name"));
        assertEquals("", dot.nodes.get("l1").get("tensor_name"));
        assertEquals("0x1000", dot.nodes.get("l1").get("label"));
    }

    @Test
    void namesWithQuotesAreEscaped() {
        var node = new GraphNode(0, 1, "ADD", "odd \"name\\", List.of(1L, 1L, 1L, 1L),
                List.of(0L, 0L, 0L), 7, true);
        DotFile dot = DotFile.parse(DagDotWriter.toDot(OperatorDag.of(List.of(node))));
        assertEquals("odd \"name\\", dot.nodes.get("n0").get("tensor_name"));
    }

    @Test
    void svgIsDrawnInJavaWithoutGraphviz() throws IOException {
        Path file = dir.resolve("dag.svg");
        OperatorDag dag = OperatorDag.of(OperatorDagTest.graph());
        DagDotWriter.write(dag, file);
        String svg = Files.readString(file);
        assertEquals(DagSvgWriter.svg(dag), svg);
        assertTrue(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""), svg.substring(0, Math.min(200, svg.length())));
        assertTrue(svg.contains(">ROPE</text>"));
    }

    @Test
    void graphvizReadsTheDotWithoutAWarning() throws IOException {
        Assumptions.assumeTrue(DagDotWriter.dotInstalled() || System.getenv("CI") != null,
                "Graphviz dot is not installed");
        // No attribute of ours clashes with one of Graphviz's own.
        Process dot = new ProcessBuilder("dot", "-Tsvg", "-o", "/dev/null").redirectErrorStream(true).start();
        try (var in = dot.getOutputStream()) {
            in.write(DagDotWriter.toDot(OperatorDag.of(OperatorDagTest.graph())).getBytes());
        }
        assertEquals("", new String(dot.getInputStream().readAllBytes()).strip());
    }

    @Test
    void otherExtensionsAreRefusedWithTheReason() {
        IOException e = assertThrows(IOException.class,
                () -> DagDotWriter.write(OperatorDag.of(OperatorDagTest.graph()), dir.resolve("dag.png")));
        assertTrue(e.getMessage().contains("write a .dot or a .svg file"), e.getMessage());
    }

    /** The DAG names the target's tensors and times its ops: 0600 unless shared, whatever the umask. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"000, dag.dot", "022, dag.svg", "077, dag.dot"})
    void theDagFileIsPrivateUnlessShared(String umask, String name) throws Exception {
        OperatorDag dag = OperatorDag.of(OperatorDagTest.graph());
        Umask.with(Integer.parseInt(umask, 8), () -> {
            Path file = dir.resolve(name);
            DagDotWriter.write(dag, file);
            assertEquals("rw-------", Umask.mode(file));
            DagDotWriter.write(dag, file, FileAccess.SHARED); // replaces it, mode and all
            assertEquals("rw-r--r--", Umask.mode(file));
            DagDotWriter.write(dag, file, FileAccess.PRIVATE);
            assertEquals("rw-------", Umask.mode(file));
        });
    }
}
