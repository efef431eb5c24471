package dev.infertop.export;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * One titled part of the DAG picture (the prologue, a block kind, the epilogue, or every node), laid out in
 * layers the cheap way: a box's rank is the longest chain of boxes leading to it inside this part; the boxes
 * of a rank share a row, in the order they were added (graph order); an oval (a leaf, or a node drawn
 * elsewhere) sits in the row just above its first reader. Linear in boxes and edges: there is no crossing
 * minimisation, so a long edge may pass behind a box, the price of never running Graphviz.
 */
final class DagSection {
    static final String RED = "#d00000";
    /** Monospace at 11 px is 6.6 px a character; a little slack keeps text inside its box. */
    static final int CHAR_PX = 7;
    static final int LINE_PX = 13;
    private static final int PAD_PX = 5;
    private static final int GAP_X_PX = 14;
    private static final int GAP_Y_PX = 26;
    private static final int TITLE_PX = 22;

    private record Item(boolean box, List<String> lines, String attributes, boolean critical, boolean dashed) {
        int widthPx() {
            int chars = lines.stream().mapToInt(String::length).max().orElse(0);
            // An oval's text needs room to clear the curve at both ends.
            return chars * CHAR_PX + (box ? 2 * PAD_PX : 6 * PAD_PX);
        }

        int heightPx() {
            return box ? lines.size() * LINE_PX + 2 * PAD_PX : LINE_PX + 6;
        }
    }

    private record Edge(int from, int to, boolean critical, boolean dashed) {}

    private final String title;
    private final List<Item> items = new ArrayList<>();
    private final List<Edge> edges = new ArrayList<>();
    private int[] xPx;
    private int[] yPx;
    private int widthPx;
    private int heightPx;

    DagSection(String title) {
        this.title = DagSvgText.shown(title, 160);
    }

    /** Adds a node's box; its lines are raw text, made visible here. Returns its id. */
    int box(List<String> lines, String attributes, boolean critical, boolean executed) {
        List<String> shown = lines.stream().map(line -> DagSvgText.shown(line, DagSvgText.NAME_MAX_CHARS)).toList();
        items.add(new Item(true, shown, attributes, critical, !executed));
        xPx = null;
        return items.size() - 1;
    }

    /** Adds a dashed oval for an input of this part. Returns its id. */
    int oval(String label, String attributes) {
        items.add(new Item(false, List.of(DagSvgText.shown(label, DagSvgText.NAME_MAX_CHARS)), attributes, false, true));
        xPx = null;
        return items.size() - 1;
    }

    void edge(int from, int to, boolean critical) {
        edges.add(new Edge(from, to, critical, !items.get(from).box()));
    }

    int widthPx() {
        layout();
        return Math.max(widthPx, title.length() * CHAR_PX);
    }

    int heightPx() {
        layout();
        return heightPx;
    }

    private void layout() {
        if (xPx != null) {
            return;
        }
        int n = items.size();
        int[] rank = new int[n];
        // Edges by target: every edge into a box's source is then settled before the box's own.
        List<Edge> byTarget = edges.stream().sorted(Comparator.comparingInt(Edge::to)).toList();
        for (Edge e : byTarget) {
            if (items.get(e.from()).box() && items.get(e.to()).box() && e.from() < e.to()) {
                rank[e.to()] = Math.max(rank[e.to()], rank[e.from()] + 1);
            }
        }
        int[] row = new int[n];
        for (int i = 0; i < n; i++) {
            row[i] = items.get(i).box() ? 2 * rank[i] + 1 : Integer.MAX_VALUE;
        }
        for (Edge e : edges) {
            if (!items.get(e.from()).box() && items.get(e.to()).box()) {
                row[e.from()] = Math.min(row[e.from()], 2 * rank[e.to()]);
            }
        }
        int rows = 0;
        for (int i = 0; i < n; i++) {
            row[i] = row[i] == Integer.MAX_VALUE ? 0 : row[i];
            rows = Math.max(rows, row[i] + 1);
        }
        List<List<Integer>> members = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            members.add(new ArrayList<>());
        }
        for (int i = 0; i < n; i++) {
            members.get(row[i]).add(i);
        }
        int[] rowWidth = new int[rows];
        for (int r = 0; r < rows; r++) {
            for (int i : members.get(r)) {
                rowWidth[r] += items.get(i).widthPx() + GAP_X_PX;
            }
            widthPx = Math.max(widthPx, rowWidth[r] - GAP_X_PX);
        }
        xPx = new int[n];
        yPx = new int[n];
        int y = TITLE_PX;
        for (int r = 0; r < rows; r++) {
            int height = members.get(r).stream().mapToInt(i -> items.get(i).heightPx()).max().orElse(0);
            int x = (widthPx - (rowWidth[r] - GAP_X_PX)) / 2;
            for (int i : members.get(r)) {
                xPx[i] = x;
                yPx[i] = y + (height - items.get(i).heightPx()) / 2;
                x += items.get(i).widthPx() + GAP_X_PX;
            }
            y += height == 0 ? 0 : height + GAP_Y_PX;
        }
        heightPx = y;
    }

    /** Draws this part with its top left corner at ({@code leftPx}, {@code topPx}). */
    void draw(StringBuilder out, int leftPx, int topPx) {
        layout();
        out.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
                leftPx, topPx + LINE_PX, DagSvgText.xml(title)));
        // Edges under the boxes: a box hides the lines that pass behind it.
        for (Edge e : edges) {
            Item from = items.get(e.from());
            Item to = items.get(e.to());
            int x1 = leftPx + xPx[e.from()] + from.widthPx() / 2;
            int y1 = topPx + yPx[e.from()] + from.heightPx();
            int x2 = leftPx + xPx[e.to()] + to.widthPx() / 2;
            int y2 = topPx + yPx[e.to()];
            int middle = (y1 + y2) / 2;
            out.append(String.format(Locale.ROOT,
                    "<path d=\"M%d %dC%d %d %d %d %d %d\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s marker-end=\"url(#%s)\"/>\n",
                    x1, y1, x1, middle, x2, middle, x2, y2, e.critical() ? RED : "#999999",
                    e.critical() ? "2" : "1", e.dashed() ? " stroke-dasharray=\"4 3\"" : "",
                    e.critical() ? "arrow-red" : "arrow"));
        }
        for (int i = 0; i < items.size(); i++) {
            drawItem(out, items.get(i), leftPx + xPx[i], topPx + yPx[i]);
        }
    }

    private static void drawItem(StringBuilder out, Item item, int x, int y) {
        int w = item.widthPx();
        int h = item.heightPx();
        out.append("<g ").append(item.attributes()).append(">");
        if (item.box()) {
            out.append(String.format(Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"%s/>",
                    x, y, w, h, item.critical() ? "#ffe4e1" : "#ffffff", item.critical() ? RED : "#333333",
                    item.critical() ? "2" : "1", item.dashed() ? " stroke-dasharray=\"2 2\"" : ""));
        } else {
            out.append(String.format(Locale.ROOT,
                    "<ellipse cx=\"%d\" cy=\"%d\" rx=\"%d\" ry=\"%d\" fill=\"#ffffff\" stroke=\"#888888\" stroke-dasharray=\"4 3\"/>",
                    x + w / 2, y + h / 2, w / 2, h / 2));
        }
        for (int line = 0; line < item.lines().size(); line++) {
            int textX = x + (item.box() ? PAD_PX : 3 * PAD_PX);
            int textY = y + (item.box() ? PAD_PX : 3) + (line + 1) * LINE_PX - 3;
            out.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\"%s%s>%s</text>", textX, textY,
                    line == 0 && item.box() ? " font-weight=\"bold\"" : "",
                    item.critical() ? " fill=\"" + RED + "\"" : item.box() ? "" : " fill=\"#666666\" font-size=\"10\"",
                    DagSvgText.xml(item.lines().get(line))));
        }
        out.append("</g>\n");
    }
}
