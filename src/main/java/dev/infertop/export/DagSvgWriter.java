package dev.infertop.export;

import dev.infertop.model.GraphNode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Draws an {@link OperatorDag} as a standalone SVG, in Java: no Graphviz process (whose layout took over a
 * minute on a 16-layer model), and work linear in the nodes, because the repeated transformer blocks are
 * folded ({@link DagFolding}) and each kind of block is drawn once, whatever the model's depth.
 *
 * <p>Top to bottom: a header (nodes, measured total, critical path and its node count, the folding); the
 * prologue, nodes before the first layer, with their own times; each block kind once, from its first layer,
 * every node with its median, min and max time across the kind's layers and, when it was on the critical path
 * in some of them, "critical in k/L layers" in red; the epilogue; then a strip with one row per layer (its
 * kind, its measured time as a bar and a number, and how much of it lies on the critical path): the only
 * part that grows with the layer count.
 *
 * <p>Leaves (weights, KV cache, inputs) are drawn as dashed ovals for the prologue, the drawn blocks and the
 * epilogue, in the row above their first reader, a layer's number in their names written N
 * ({@code blk.N.attn_q.weight}): a dozen per block stay readable and tell which weight a matmul reads. A node
 * drawn in another part (the previous layer's output) is an oval too. Graphs that do not fold (names without
 * layer numbers) are drawn whole with the same layout but without leaves, which would double the picture;
 * past {@link #MAX_DRAWN_NODES} nodes only the critical path is drawn, with a line saying how many were left
 * out. Every node box carries {@code data-node} (its position in the DAG) and its times as attributes, every
 * strip row {@code data-layer}, so scripts and tests can read the picture back.
 */
public final class DagSvgWriter {
    /** Beyond this many boxes a picture is no longer read, only waited for. */
    static final int MAX_DRAWN_NODES = 4000;
    private static final int MARGIN_PX = 12;
    private static final int HEADER_LINE_PX = 16;
    private static final int SECTION_GAP_PX = 24;
    private static final int STRIP_ROW_PX = 15;
    private static final int STRIP_BAR_X_PX = 96;
    private static final int BAR_PX = 300;

    /** What a node's box shows: raw lines (made visible when drawn), data attributes, and whether it is red. */
    private record Look(List<String> lines, String attributes, boolean critical) {}

    private DagSvgWriter() {}

    /** The picture, UTF-8 text; the same DAG always gives the same bytes. */
    public static String svg(OperatorDag dag) {
        DagFolding folding = DagFolding.of(dag);
        Set<Long> criticalEdges = criticalEdges(dag);
        int nodes = dag.nodes().size();
        List<String> header = new ArrayList<>();
        header.add(String.format(Locale.ROOT, "infertop operator DAG: %d nodes, %s measured, critical path %s over %d nodes",
                nodes, DagSvgText.ms(dag.totalNs()), DagSvgText.ms(dag.criticalPathNs()), dag.criticalPath().size()));
        if (folding.folded()) {
            String kinds = folding.kinds().stream()
                    .map(kind -> kind.label() + ": " + kind.layerNumbers().size())
                    .collect(Collectors.joining(", "));
            header.add(String.format(Locale.ROOT, "folded: %d layers into %d block kind%s (%s)", folding.layers().size(),
                    folding.kinds().size(), folding.kinds().size() == 1 ? "" : "s", DagSvgText.shown(kinds, 100)));
            header.add("each block kind drawn once; a node's times are the median, min and max across its layers");
            header.add("red: on the critical path (in a block kind: in at least one of its layers)");
        } else {
            header.add("not folded: " + folding.whyNotFolded());
            header.add("red: on the critical path");
        }
        List<DagSection> sections = new ArrayList<>();
        int drawn = folding.folded() ? foldedNodeCount(folding) : nodes;
        if (drawn > MAX_DRAWN_NODES) {
            header.add(String.format(Locale.ROOT, "%d of %d nodes left out (over %d to draw): only the critical path is drawn",
                    nodes - dag.criticalPath().size(), nodes, MAX_DRAWN_NODES));
            sections.add(section(dag, "critical path: " + dag.criticalPath().size() + " nodes", dag.criticalPath(),
                    i -> detailed(dag, i), (s, i) -> criticalEdges.contains(edge(s, i)), name -> name, false));
        } else if (folding.folded()) {
            addFolded(sections, dag, folding, criticalEdges);
        } else {
            sections.add(section(dag, "every node (" + nodes + "), unfolded", IntStream.range(0, nodes).boxed().toList(),
                    i -> detailed(dag, i), (s, i) -> criticalEdges.contains(edge(s, i)), name -> name, false));
        }
        return page(header, sections, folding.folded() ? folding.layers() : List.of());
    }

    private static int foldedNodeCount(DagFolding folding) {
        int count = folding.prologue().size() + folding.epilogue().size();
        for (DagFolding.Kind kind : folding.kinds()) {
            count += kind.representative().length;
        }
        return count;
    }

    private static void addFolded(List<DagSection> sections, OperatorDag dag, DagFolding folding, Set<Long> criticalEdges) {
        BiPredicate<Integer, Integer> critical = (s, i) -> criticalEdges.contains(edge(s, i));
        List<DagFolding.Layer> layers = folding.layers();
        if (!folding.prologue().isEmpty()) {
            sections.add(section(dag, "prologue: " + nodes(folding.prologue().size()) + " before layer "
                    + layers.getFirst().number(), folding.prologue(), i -> detailed(dag, i), critical, name -> name, true));
        }
        for (DagFolding.Kind kind : folding.kinds()) {
            sections.add(kindSection(dag, folding, kind, criticalEdges));
        }
        if (!folding.epilogue().isEmpty()) {
            sections.add(section(dag, "epilogue: " + nodes(folding.epilogue().size()) + " after layer "
                    + layers.getLast().number(), folding.epilogue(), i -> detailed(dag, i), critical, name -> name, true));
        }
    }

    /** A block kind, drawn from its first layer with each node's times across all the kind's layers. */
    private static DagSection kindSection(OperatorDag dag, DagFolding folding, DagFolding.Kind kind, Set<Long> criticalEdges) {
        int[] representative = kind.representative();
        int layer = kind.layerNumbers().getFirst();
        Map<Integer, Integer> positionOf = new HashMap<>();
        List<DagFolding.NodeStats> stats = new ArrayList<>();
        for (int p = 0; p < representative.length; p++) {
            positionOf.put(representative[p], p);
            stats.add(folding.stats(kind, p));
        }
        IntFunction<Look> look = i -> {
            GraphNode node = dag.nodes().get(i);
            DagFolding.NodeStats s = stats.get(positionOf.get(i));
            List<String> lines = new ArrayList<>(List.of(node.op(), DagFolding.generic(node.name(), layer), node.shapeText()));
            if (s.maxNs() == 0 && !node.executed()) {
                lines.add("not run");
            } else {
                lines.add("median " + DagSvgText.time(s.medianNs()));
                lines.add("min " + DagSvgText.time(s.minNs()) + " max " + DagSvgText.time(s.maxNs()));
            }
            if (s.criticalLayers() > 0) {
                lines.add("critical in " + s.criticalLayers() + "/" + s.layers() + " layers");
            }
            return new Look(lines, String.format(Locale.ROOT,
                    "data-node=\"%d\" data-median-ns=\"%d\" data-min-ns=\"%d\" data-max-ns=\"%d\" data-critical-layers=\"%d/%d\"",
                    i, s.medianNs(), s.minNs(), s.maxNs(), s.criticalLayers(), s.layers()), s.criticalLayers() > 0);
        };
        // An edge inside the block is red when it was on the critical path in any of the kind's layers.
        BiPredicate<Integer, Integer> critical = (source, i) -> {
            Integer from = positionOf.get(source);
            if (from == null) {
                return criticalEdges.contains(edge(source, i));
            }
            int to = positionOf.get(i);
            for (int[] nodes : kind.nodes()) {
                if (criticalEdges.contains(edge(nodes[from], nodes[to]))) {
                    return true;
                }
            }
            return false;
        };
        String title = String.format(Locale.ROOT, "block kind %s: layers %s (%d), drawn from layer %d", kind.label(),
                DagSvgText.runs(kind.layerNumbers(), 80), kind.layerNumbers().size(), layer);
        return section(dag, title, IntStream.of(representative).boxed().toList(), look, critical,
                name -> DagFolding.generic(name, layer), true);
    }

    /** A node with its own time. */
    private static Look detailed(OperatorDag dag, int i) {
        GraphNode node = dag.nodes().get(i);
        return new Look(List.of(node.op(), node.name(), node.shapeText(),
                node.executed() ? DagSvgText.time(node.timeNs()) : "not run"),
                String.format(Locale.ROOT, "data-node=\"%d\" data-time-ns=\"%d\"", i, node.timeNs()), dag.onCriticalPath(i));
    }

    /**
     * The given nodes as boxes with the edges among them; with inputs, their leaves and the nodes they read from
     * other parts as ovals, named through {@code naming}.
     */
    private static DagSection section(OperatorDag dag, String title, List<Integer> positions, IntFunction<Look> look,
                                      BiPredicate<Integer, Integer> critical, UnaryOperator<String> naming,
                                      boolean withInputs) {
        DagSection section = new DagSection(title);
        Map<Integer, Integer> boxOf = new HashMap<>();
        for (int i : positions) {
            Look l = look.apply(i);
            boxOf.put(i, section.box(l.lines(), l.attributes(), l.critical(), dag.nodes().get(i).executed()));
        }
        Map<Integer, Integer> leafOval = new HashMap<>();
        Map<Integer, Integer> outsideOval = new HashMap<>();
        for (int i : positions) {
            int to = boxOf.get(i);
            if (withInputs) {
                for (int leaf : dag.leafSources(i)) {
                    section.edge(leafOval.computeIfAbsent(leaf, l -> section.oval(naming.apply(leafName(dag, l)),
                            "data-leaf=\"" + l + "\"")), to, false);
                }
            }
            for (int source : dag.nodeSources(i)) {
                Integer from = boxOf.get(source);
                if (from == null && withInputs) {
                    from = outsideOval.computeIfAbsent(source, s -> section.oval(naming.apply(dag.nodes().get(s).name()),
                            "data-outside=\"" + s + "\""));
                }
                if (from != null) {
                    section.edge(from, to, critical.test(source, i));
                }
            }
        }
        return section;
    }

    private static String nodes(int count) {
        return count + (count == 1 ? " node" : " nodes");
    }

    private static String leafName(OperatorDag dag, int leaf) {
        String name = dag.leafNames().get(leaf);
        return name.isEmpty() ? String.format(Locale.ROOT, "0x%x", dag.leaves().get(leaf)) : name;
    }

    private static long edge(int source, int node) {
        return (long) source << 32 | node;
    }

    /** The critical path's edges, once: OperatorDag#criticalEdge searches the path on every call. */
    private static Set<Long> criticalEdges(OperatorDag dag) {
        Set<Long> edges = new HashSet<>();
        List<Integer> path = dag.criticalPath();
        for (int k = 1; k < path.size(); k++) {
            edges.add(edge(path.get(k - 1), path.get(k)));
        }
        return edges;
    }

    private static String page(List<String> header, List<DagSection> sections, List<DagFolding.Layer> layers) {
        StringBuilder body = new StringBuilder();
        int widthPx = 0;
        int y = MARGIN_PX;
        for (int line = 0; line < header.size(); line++) {
            String shown = DagSvgText.shown(header.get(line), 200);
            y += HEADER_LINE_PX;
            body.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\"%s>%s</text>\n", MARGIN_PX, y - 4,
                    line == 0 ? " font-weight=\"bold\"" : "", DagSvgText.xml(shown)));
            widthPx = Math.max(widthPx, shown.length() * DagSection.CHAR_PX);
        }
        for (DagSection section : sections) {
            y += SECTION_GAP_PX;
            section.draw(body, MARGIN_PX, y);
            y += section.heightPx();
            widthPx = Math.max(widthPx, section.widthPx());
        }
        if (!layers.isEmpty()) {
            y += SECTION_GAP_PX;
            y = strip(body, layers, y);
            widthPx = Math.max(widthPx, STRIP_BAR_X_PX + BAR_PX + 26 * DagSection.CHAR_PX);
        }
        int width = widthPx + 2 * MARGIN_PX;
        int height = y + MARGIN_PX;
        return String.format(Locale.ROOT, """
                <?xml version="1.0" encoding="UTF-8"?>
                <svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="11">
                <defs>
                <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0L8 4L0 8z" fill="#999999"/></marker>
                <marker id="arrow-red" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0 0L8 4L0 8z" fill="%s"/></marker>
                </defs>
                <rect width="100%%" height="100%%" fill="#ffffff"/>
                """, width, height, width, height, DagSection.RED) + body + "</svg>\n";
    }

    /** One row per layer, in number order, in columns (SVG text drops repeated spaces); returns the y below it. */
    private static int strip(StringBuilder out, List<DagFolding.Layer> layers, int topPx) {
        long maxNs = layers.stream().mapToLong(DagFolding.Layer::totalNs).max().orElse(0);
        int numberEnd = MARGIN_PX + 5 * DagSection.CHAR_PX;
        int kindX = numberEnd + 2 * DagSection.CHAR_PX;
        int barX = MARGIN_PX + STRIP_BAR_X_PX;
        int totalEnd = barX + BAR_PX + 13 * DagSection.CHAR_PX;
        int criticalEnd = totalEnd + 13 * DagSection.CHAR_PX;
        int y = topPx + HEADER_LINE_PX;
        out.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">per layer</text>\n",
                MARGIN_PX, y - 4));
        y += STRIP_ROW_PX;
        out.append(String.format(Locale.ROOT, "<g fill=\"#666666\"><text x=\"%d\" y=\"%d\" text-anchor=\"end\">layer</text>"
                        + "<text x=\"%d\" y=\"%d\">kind</text><text x=\"%d\" y=\"%d\">measured time, on the critical path in red</text>"
                        + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">total</text>"
                        + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">critical</text></g>\n",
                numberEnd, y - 3, kindX, y - 3, barX, y - 3, totalEnd, y - 3, criticalEnd, y - 3));
        for (DagFolding.Layer layer : layers) {
            int rowTop = y + 2;
            y += STRIP_ROW_PX;
            out.append(String.format(Locale.ROOT,
                    "<g data-layer=\"%d\" data-kind=\"%s\" data-total-ns=\"%d\" data-critical-ns=\"%d\">"
                            + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%d</text><text x=\"%d\" y=\"%d\">%s</text>"
                            + "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"10\" fill=\"#9bb7d4\"/>"
                            + "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"10\" fill=\"%s\"/>"
                            + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
                            + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text></g>\n",
                    layer.number(), layer.kind(), layer.totalNs(), layer.criticalNs(),
                    numberEnd, y - 3, layer.number(), kindX, y - 3, layer.kind(),
                    barX, rowTop, barPx(layer.totalNs(), maxNs), barX, rowTop, barPx(layer.criticalNs(), maxNs),
                    DagSection.RED, totalEnd, y - 3, DagSvgText.time(layer.totalNs()),
                    criticalEnd, y - 3, DagSvgText.time(layer.criticalNs())));
        }
        return y;
    }

    private static int barPx(long ns, long maxNs) {
        return maxNs <= 0 ? 0 : (int) Math.round((double) ns / maxNs * BAR_PX);
    }
}
