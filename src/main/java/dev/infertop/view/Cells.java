package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;

/** Drawing helpers: every write fills its whole width, so a frame never needs a clear (Lanterna #618). */
final class Cells {
    private Cells() {}

    /** Writes {@code text} at (col,row), cut or padded with spaces to exactly {@code width} columns. */
    static void put(TextGraphics g, int col, int row, String text, int width) {
        if (width <= 0 || row < 0 || row >= g.getSize().getRows()) {
            return;
        }
        g.putString(col, row, fit(text, width));
    }

    static String fit(String text, int width) {
        if (width <= 0) {
            return "";
        }
        if (text.length() >= width) {
            return text.substring(0, width);
        }
        return text + " ".repeat(width - text.length());
    }

    static String right(String text, int width) {
        if (text.length() >= width) {
            return text.substring(0, width);
        }
        return " ".repeat(width - text.length()) + text;
    }

    /** Fills rows {@code from..to-1} with spaces. */
    static void blank(TextGraphics g, int from, int to) {
        int width = g.getSize().getColumns();
        for (int row = Math.max(0, from); row < Math.min(to, g.getSize().getRows()); row++) {
            g.putString(0, row, " ".repeat(width));
        }
    }

    private static final char[] SPARKS = {'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'};

    /** A sparkline of {@code values}, scaled to their maximum; right-aligned in {@code width}. */
    static String sparkline(double[] values, int width) {
        double max = 0;
        for (double v : values) {
            max = Math.max(max, v);
        }
        StringBuilder line = new StringBuilder();
        int from = Math.max(0, values.length - width);
        for (int i = from; i < values.length; i++) {
            if (max <= 0 || values[i] <= 0) {
                line.append(' ');
            } else {
                int level = (int) Math.round(values[i] / max * (SPARKS.length - 1));
                line.append(SPARKS[Math.max(0, Math.min(SPARKS.length - 1, level))]);
            }
        }
        return right(line.toString(), width);
    }
}
