package dev.infertop.tui;

import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TextCharacter;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.graphics.TextImage;

import java.util.EnumSet;

/**
 * The bytes that turn what the terminal shows into the frame just drawn: a cursor move where a run of changed
 * cells starts, one SGR sequence where the style changes (a reset and the whole style, so nothing depends on
 * what the terminal had set), and the cells' characters. Lanterna's own delta refresh sorts the changed cells in
 * a tree, compares every SGR per cell and encodes each character as its own byte array, which cost more than
 * drawing the frame; this walks the cells once into one reused buffer.
 */
final class DeltaFrame {
    private static final char ESC = 0x1b;

    private final StringBuilder out = new StringBuilder(1 << 14);
    private int cursorColumn;
    private int cursorRow;
    private TextColor foreground;
    private TextColor background;
    private EnumSet<SGR> modifiers;

    /**
     * The escapes and characters for the cells of {@code back} that differ from {@code front} in the
     * {@code columns} × {@code rows} both cover, then the cursor hidden (the live view never shows it); empty
     * when nothing changed. The buffer is reused: the result is valid until the next call.
     */
    CharSequence encode(TextImage front, TextImage back, int columns, int rows) {
        out.setLength(0);
        cursorColumn = -1;
        cursorRow = -1;
        foreground = null;
        background = null;
        modifiers = null;
        for (int y = 0; y < rows; y++) {
            for (int x = 0; x < columns; x++) {
                TextCharacter cell = back.getCharacterAt(x, y);
                if (cell == null) {
                    continue;
                }
                if (!cell.equals(front.getCharacterAt(x, y))) {
                    put(x, y, cell);
                }
                if (cell.isDoubleWidth()) {
                    x++; // its second column is padding, drawn by the character itself
                }
            }
        }
        if (out.length() > 0) {
            out.append(ESC).append("[?25l");
        }
        return out;
    }

    private void put(int x, int y, TextCharacter cell) {
        if (x != cursorColumn || y != cursorRow) {
            out.append(ESC).append('[').append(y + 1).append(';').append(x + 1).append('H');
        }
        style(cell);
        out.append(cell.getCharacterString()); // never a control character: TextCharacter refuses them
        cursorColumn = x + (cell.isDoubleWidth() ? 2 : 1);
        cursorRow = y;
    }

    private void style(TextCharacter cell) {
        TextColor fg = cell.getForegroundColor();
        TextColor bg = cell.getBackgroundColor();
        EnumSet<SGR> sgrs = cell.getModifiers(); // a copy: one small object per changed cell
        if (fg.equals(foreground) && bg.equals(background) && sgrs.equals(modifiers)) {
            return;
        }
        foreground = fg;
        background = bg;
        modifiers = sgrs;
        out.append(ESC).append("[0");
        for (SGR sgr : modifiers) {
            out.append(';').append(code(sgr));
        }
        out.append(';');
        ascii(fg.getForegroundSGRSequence());
        out.append(';');
        ascii(bg.getBackgroundSGRSequence());
        out.append('m');
    }

    /** ECMA-48's number for each modifier Lanterna knows. */
    static int code(SGR sgr) {
        return switch (sgr) {
            case BOLD -> 1;
            case ITALIC -> 3;
            case UNDERLINE -> 4;
            case BLINK -> 5;
            case REVERSE -> 7;
            case CROSSED_OUT -> 9;
            case FRAKTUR -> 20;
            case BORDERED -> 51;
            case CIRCLED -> 52;
        };
    }

    private void ascii(byte[] sequence) {
        for (byte b : sequence) {
            out.append((char) (b & 0xff));
        }
    }
}
