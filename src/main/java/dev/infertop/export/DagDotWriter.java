package dev.infertop.export;

import dev.infertop.io.FileAccess;
import dev.infertop.io.OutputFiles;
import dev.infertop.model.GraphNode;
import dev.infertop.model.SafeText;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Writes an {@link OperatorDag} as Graphviz DOT, or as SVG drawn by {@link DagSvgWriter} (no Graphviz: its
 * layout took over a minute on a 16-layer model); the format follows the file name's extension. Every DOT node
 * carries machine-readable attributes besides its label ({@code op}, {@code tensor_name}, {@code ne} (the
 * shape), {@code time_ns}, {@code critical}), so the DOT file can be read back by scripts. Critical-path nodes
 * and edges are red.
 */
public final class DagDotWriter {
    private DagDotWriter() {}

    /**
     * Writes {@code dag} to {@code file}: {@code .dot}/{@code .gv} as DOT text, {@code .svg} as
     * {@link DagSvgWriter}'s picture.
     *
     * @throws IOException with a one-line reason: the file cannot be written, is a symbolic link, or the
     *                     extension is neither
     */
    public static void write(OperatorDag dag, Path file) throws IOException {
        write(dag, file, FileAccess.PRIVATE);
    }

    /**
     * As {@link #write(OperatorDag, Path)}, the file's mode {@code access}'s exactly: the graph names the
     * target's tensors and times its ops.
     */
    public static void write(OperatorDag dag, Path file, FileAccess access) throws IOException {
        String text = switch (format(file)) {
            case "dot" -> toDot(dag);
            case "svg" -> DagSvgWriter.svg(dag);
            default -> throw new IOException(file + ": write a .dot or a .svg file");
        };
        // A predictable name in the working directory, written as root: never through a link planted there.
        OutputFiles.replace(file, access, out -> out.write(text.getBytes(StandardCharsets.UTF_8)));
    }

    /** "dot", "svg", or "" for a name with neither extension. */
    public static String format(Path file) {
        String name = file.getFileName() == null ? "" : file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".dot") || name.endsWith(".gv")) {
            return "dot";
        }
        return name.endsWith(".svg") ? "svg" : "";
    }

    /** Whether Graphviz's {@code dot} is on the PATH (to render a .dot file by hand; {@code .svg} needs none). */
    public static boolean dotInstalled() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "dot"))) {
                return true;
            }
        }
        return false;
    }

    /** The DAG as DOT text: nodes {@code n<position>}, leaves {@code l<id>}. */
    public static String toDot(OperatorDag dag) {
        StringBuilder out = new StringBuilder();
        out.append("digraph infertop {\n");
        out.append(String.format(Locale.ROOT,
                "  graph [rankdir=TB, labelloc=t, label=%s, nodes=%d, critical_path_ns=%d, total_ns=%d];\n",
                quote(String.format(Locale.ROOT, "infertop: %d nodes, %.3f ms measured, critical path %.3f ms over %d nodes",
                        dag.nodes().size(), dag.totalNs() / 1e6, dag.criticalPathNs() / 1e6, dag.criticalPath().size())),
                dag.nodes().size(), dag.criticalPathNs(), dag.totalNs()));
        out.append("  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
        for (int i = 0; i < dag.leaves().size(); i++) {
            String name = dag.leafNames().get(i);
            String address = String.format(Locale.ROOT, "0x%x", dag.leaves().get(i));
            out.append(String.format(Locale.ROOT,
                    "  l%d [label=%s, leaf=true, tensor_name=%s, tensor=\"%s\", shape=ellipse, style=dashed, fontsize=8];\n",
                    i, quote(name.isEmpty() ? address : name + "\n" + address), quote(name), address));
        }
        for (int i = 0; i < dag.nodes().size(); i++) {
            GraphNode node = dag.nodes().get(i);
            boolean critical = dag.onCriticalPath(i);
            String label = node.op() + "\n" + node.name() + "\n" + node.shapeText()
                    + (node.executed() ? "\n" + time(node.timeNs()) : "");
            out.append(String.format(Locale.ROOT,
                    "  n%d [label=%s, op=%s, tensor_name=%s, ne=%s, index=%d, tensor=\"0x%x\", time_ns=%d, executed=%b, critical=%b%s];\n",
                    i, quote(label), quote(node.op()), quote(node.name()), quote(node.shapeText()), node.index(),
                    node.tensor(), node.timeNs(), node.executed(), critical,
                    critical ? ", color=red, penwidth=2, style=filled, fillcolor=\"#ffe4e1\""
                            : node.executed() ? "" : ", style=dotted"));
        }
        for (int i = 0; i < dag.nodes().size(); i++) {
            for (int leaf : dag.leafSources(i)) {
                out.append(String.format(Locale.ROOT, "  l%d -> n%d [style=dashed];\n", leaf, i));
            }
            for (int source : dag.nodeSources(i)) {
                out.append(String.format(Locale.ROOT, "  n%d -> n%d%s;\n", source, i,
                        dag.criticalEdge(source, i) ? " [color=red, penwidth=2]" : ""));
            }
        }
        out.append("}\n");
        return out.toString();
    }

    /** A node's time for its label: µs below a millisecond (a small model's nodes take a few µs). */
    static String time(long ns) {
        return ns < 1_000_000 ? String.format(Locale.ROOT, "%.1f µs", ns / 1e3)
                : String.format(Locale.ROOT, "%.3f ms", ns / 1e6);
    }

    /**
     * A DOT string literal: controls made visible ({@link SafeText}), quotes and backslashes escaped, line breaks
     * as \n (a centred line in labels).
     */
    static String quote(String raw) {
        String text = SafeText.lines(raw); // a line break is ours (label lines); any other control is shown
        StringBuilder quoted = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                default -> quoted.append(c < 0x20 ? ' ' : c);
            }
        }
        return quoted.append('"').toString();
    }
}
