package dev.infertop.view;

import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TextCharacter;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.graphics.BasicTextImage;
import com.googlecode.lanterna.graphics.TextGraphics;
import com.googlecode.lanterna.graphics.TextImage;
import dev.infertop.model.SafeText;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

/** Cells.put reuses one TextCharacter per character and style: the cells must be those putString writes. */
class CellsTest {
    private static final List<String> TEXTS = List.of(
            "MUL_MAT  blk.7.ffn_up  [1024,2816,1,1]  12.3 ms",
            "▁▂▃▄▅▆▇█ ⠁⠂⠄ ─│┼ é ñ µs ±",       // sparkline, braille, box drawing, Latin-1: the reused path
            "名前 wide", "tab\there", "emoji ⌚ x");   // double width: putString's own layout; a control: an escape

    private static void draw(TextGraphics g, boolean viaCells) {
        TextColor[] foregrounds = {TextColor.ANSI.DEFAULT, TextColor.ANSI.GREEN_BRIGHT, new TextColor.RGB(10, 200, 30)};
        int row = 0;
        for (TextColor foreground : foregrounds) {
            for (boolean bold : new boolean[] {false, true}) {
                for (String text : TEXTS) {
                    g.setForegroundColor(foreground);
                    g.setBackgroundColor(bold ? TextColor.ANSI.BLUE : TextColor.ANSI.DEFAULT);
                    g.clearModifiers();
                    if (bold) {
                        g.enableModifiers(SGR.BOLD, SGR.REVERSE);
                    }
                    if (viaCells) {
                        Cells.put(g, 2, row, text, 60);
                    } else {
                        g.putString(2, row, Cells.fit(SafeText.of(text), 60)); // Cells' guard shows controls
                    }
                    row++;
                }
            }
        }
    }

    /** What a cell shows (Cells' cells are a subclass, which TextCharacter.equals tells apart). */
    private static String looks(TextCharacter cell) {
        return cell.getCharacterString() + "|" + cell.getForegroundColor() + "|" + cell.getBackgroundColor() + "|"
                + cell.getModifiers() + "|" + cell.isDoubleWidth();
    }

    @Test
    void reusedCellsAreTheCellsPutStringWrites() {
        TextImage first = null;
        for (int pass = 0; pass < 2; pass++) { // the second pass takes every cell from the cache
            TextImage expected = new BasicTextImage(new TerminalSize(70, 40));
            TextImage actual = new BasicTextImage(new TerminalSize(70, 40));
            draw(expected.newTextGraphics(), false);
            draw(actual.newTextGraphics(), true);
            for (int row = 0; row < 40; row++) {
                for (int col = 0; col < 70; col++) {
                    assertEquals(looks(expected.getCharacterAt(col, row)), looks(actual.getCharacterAt(col, row)),
                            "pass " + pass + " at " + col + "," + row);
                }
            }
            if (first != null) {
                // Reused, not rebuilt: row 0 (plain text) and row 1 (sparkline, box drawing) hold the same cell
                // objects frame after frame; row 2 (double width) was laid out by putString again.
                assertSame(first.getCharacterAt(2, 0), actual.getCharacterAt(2, 0));
                assertSame(first.getCharacterAt(5, 1), actual.getCharacterAt(5, 1));
                assertNotSame(first.getCharacterAt(2, 2), actual.getCharacterAt(2, 2));
            }
            first = actual;
        }
    }
}
