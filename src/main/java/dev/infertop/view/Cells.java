package dev.infertop.view;

import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TextCharacter;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.SafeText;

import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Drawing helpers: every write fills its whole width, so a frame never needs a clear (Lanterna #618). */
final class Cells {
    private Cells() {}

    /** Writes {@code text} at (col,row), cut or padded with spaces to exactly {@code width} columns. */
    static void put(TextGraphics g, int col, int row, String text, int width) {
        if (width <= 0 || row < 0 || row >= g.getSize().getRows()) {
            return;
        }
        // The guard of the live view: target text is made visible where it enters, and what slipped past is
        // made visible here (Lanterna throws on a control character, which would end the view).
        putCells(g, col, row, fit(SafeText.of(text), width));
    }

    /** A style: colours and the modifiers as a bit set (the graphics' own modifier set is live: never a key). */
    private record Style(TextColor foreground, TextColor background, int modifierBits) {
        static Style of(TextGraphics g) {
            int bits = 0;
            for (SGR modifier : g.getActiveModifiers()) {
                bits |= 1 << modifier.ordinal();
            }
            return new Style(g.getForegroundColor(), g.getBackgroundColor(), bits);
        }

        EnumSet<SGR> modifiers() {
            EnumSet<SGR> modifiers = EnumSet.noneOf(SGR.class);
            for (SGR modifier : SGR.values()) {
                if ((modifierBits & 1 << modifier.ordinal()) != 0) {
                    modifiers.add(modifier);
                }
            }
            return modifiers;
        }
    }

    /** One style's cells, by character, in pages of 256 characters made when first used. */
    private static final Map<Style, TextCharacter[][]> CELLS = new ConcurrentHashMap<>();

    /**
     * A TextCharacter that knows its width: Lanterna asks isDoubleWidth() of each cell several times per
     * frame (a Unicode block lookup and an emoji check each time). Buffers compare cells by class too, so
     * a cell drawn the same way frame after frame stays equal and is not sent again.
     */
    private static final class Cell extends TextCharacter {
        private final boolean doubleWidth;

        Cell(char character, Style style) {
            super(character, style.foreground(), style.background(), style.modifiers());
            this.doubleWidth = super.isDoubleWidth();
        }

        @Override
        public boolean isDoubleWidth() {
            return doubleWidth;
        }

        /**
         * The same cell frame after frame is the same instance: the screen's diff compares every cell of the back
         * buffer with the front one each frame, and Lanterna's equals compares text, colours and modifier sets.
         */
        @Override
        public boolean equals(Object other) {
            return other == this || super.equals(other);
        }

        @Override
        public int hashCode() {
            return super.hashCode();
        }
    }

    /**
     * {@code g.putString(col, row, text)}, reusing one cell per character and style: putString makes and
     * validates a TextCharacter per cell (a Unicode block lookup, emoji and grapheme checks), which was most of
     * the live view's CPU, and a frame's few styles and characters repeat frame after frame. Text with a
     * control, surrogate or double-width character goes to putString, which lays those out.
     */
    private static void putCells(TextGraphics g, int col, int row, String text) {
        Style style = Style.of(g);
        TextCharacter[][] pages = CELLS.computeIfAbsent(style, key -> new TextCharacter[256][]);
        int length = text.length();
        for (int i = 0; i < length; i++) { // first every cell, so a fallback writes nothing twice
            if (cell(pages, style, text.charAt(i)) == null) {
                g.putString(col, row, text);
                return;
            }
        }
        for (int i = 0; i < length; i++) {
            g.setCharacter(col + i, row, cell(pages, style, text.charAt(i)));
        }
    }

    /** The cell for {@code c} in this style, made on first use; null where putString must lay it out. */
    private static TextCharacter cell(TextCharacter[][] pages, Style style, char c) {
        if (c < ' ' || Character.isSurrogate(c)) {
            return null;
        }
        TextCharacter[] page = pages[c >>> 8];
        if (page == null) {
            page = new TextCharacter[256];
            pages[c >>> 8] = page;
        }
        TextCharacter cell = page[c & 0xff];
        if (cell == null) {
            cell = new Cell(c, style);
            page[c & 0xff] = cell;
        }
        return cell.isDoubleWidth() ? null : cell;
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
            putCells(g, 0, row, " ".repeat(width));
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
