package dev.infertop.model;

import com.googlecode.lanterna.TerminalTextUtils;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every class of character that acts instead of showing comes out as a visible escape; the rest is kept. */
class SafeTextTest {
    @Test
    void everyC0ControlIsShownAsHex() {
        for (int c = 0; c < 0x20; c++) {
            assertEquals(String.format("a\\x%02xb", c), SafeText.of("a" + (char) c + "b"));
        }
        // The title-setting sequence of the issue: ESC ] 0 ; title BEL.
        assertEquals("llama\\x1b]0;pwned\\x07", SafeText.of("llama\u001b]0;pwned\u0007"));
    }

    @Test
    void delAndEveryC1ControlAreShownAsHex() {
        assertEquals("\\x7f", SafeText.of("\u007f"));
        for (int c = 0x80; c <= 0x9f; c++) {
            assertEquals(String.format("x\\x%02x", c), SafeText.of("x" + (char) c));
        }
        assertEquals("\\x9b2J", SafeText.of("\u009b2J")); // C1 CSI: a control sequence on terminals that honour C1
    }

    @Test
    void bidirectionalControlsAndOtherInvisibleCharactersAreShownAsUnicodeEscapes() {
        // A right-to-left override makes "fdp.exe" read as "exe.pdf".
        assertEquals("model-\\u202efdp.gguf", SafeText.of("model-\u202efdp.gguf"));
        for (int cp : new int[] {0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
                0x200e, 0x200f, 0x061c, 0x200b, 0x00ad, 0x2028, 0x2029, 0xfeff}) {
            assertEquals(String.format("\\u%04x", cp), SafeText.of(Character.toString(cp)), Integer.toHexString(cp));
        }
        assertEquals("\\u{e0041}", SafeText.of(Character.toString(0xe0041))); // a tag character
        assertEquals("\\ud800x", SafeText.of("\ud800x")); // a lone surrogate
        assertEquals("\\ue000", SafeText.of("\ue000")); // private use
        assertEquals("\\u0378", SafeText.of("\u0378")); // unassigned
        assertEquals("\\ufffe\\uffff", SafeText.of("\ufffe\uffff")); // non-characters
    }

    @Test
    void validUtf8TextIsKeptAsItIs() {
        for (String text : new String[] {"llama-bench", "/models/llama-3 ünïcode 模型.gguf", "naïve e\u0301",
                "blk.0.attn_q.weight", "emoji 😀 ok", "RMS_NORM+MUL", "tab-free µs ±", ""}) {
            assertSame(text, SafeText.of(text), text); // no copy when nothing is unsafe
            assertTrue(SafeText.isSafe(text));
        }
        assertNull(SafeText.of(null));
    }

    @Test
    void sanitisingTwiceChangesNothing() {
        String hostile = "a\u001b[2J\u0007\u007f\u009b\u202e\ud800\\x1b\\";
        String once = SafeText.of(hostile);
        assertEquals(once, SafeText.of(once));
        assertTrue(SafeText.isSafe(once));
        assertEquals("a\\x1b[2J\\x07\\x7f\\x9b\\u202e\\ud800\\x1b\\", once); // a backslash stays: a fixed point
    }

    @Test
    void linesKeepsLineFeedsAndTabsOnly() {
        assertEquals("one\ttwo\nthree\\x1b\\x0d", SafeText.lines("one\ttwo\nthree\u001b\r"));
    }

    @Test
    void anEscapeTakesOneColumnPerCharacterInTheView() {
        // Lanterna lays text out by column width: the escapes are ASCII, so a shown name is as wide as it is long
        // (plus one more column for each double-width character that was kept).
        String shown = SafeText.of("名前\u001b\u009b\u202e");
        assertEquals("名前\\x1b\\x9b\\u202e", shown);
        assertEquals(2 * 2 + 4 + 4 + 6, TerminalTextUtils.getColumnWidth(shown));
        assertFalse(shown.chars().anyMatch(c -> TerminalTextUtils.isControlCharacter((char) c)));
    }
}
