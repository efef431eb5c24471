package dev.infertop.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The guard of stdout and stderr: bytes that act on a terminal come out as escapes, UTF-8 text as it is. */
class ControlCharacterFilterTest {
    private static String through(String text) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = ControlCharacterFilter.guarded(bytes);
        out.print(text);
        out.flush();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void c0AndDelBecomeHexButLineBreaksAndTabsPass() {
        assertEquals("infertop: \\x1b]0;pwned\\x07 gone\n\ttab\rprogress\\x00\\x7f",
                through("infertop: \u001b]0;pwned\u0007 gone\n\ttab\rprogress\u0000\u007f"));
    }

    @Test
    void c1ControlsBecomeHex() {
        assertEquals("\\x9b2J \\x80\\x85\\x9f", through("\u009b2J \u0080\u0085\u009f"));
    }

    @Test
    void bidirectionalControlsAndSeparatorsBecomeUnicodeEscapes() {
        assertEquals("\\u202efdp \\u2066\\u2069\\u200e\\u200f\\u2028\\u2029\\u061c",
                through("\u202efdp \u2066\u2069\u200e\u200f\u2028\u2029\u061c"));
    }

    @Test
    void utf8TextThatSharesLeadBytesIsKept() {
        // C2 A0 (no-break space), C2 B5 (µ), D8 A7 (alef), E2 80 94 (em dash), E2 81 B0 (superscript 0), E2 96 81.
        String text = "a\u00a0b µs \u0627 — \u2070 ▁ 模型 😀 é";
        assertEquals(text, through(text));
    }

    /** Every byte value, alone and after each lead byte, in one array write: as written byte by byte. */
    @Test
    void anArrayWriteFiltersAsByteByByteWritesDo() throws Exception {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        for (int b = 0; b < 256; b++) {
            text.write('a');
            text.write(b);
            for (int lead : new int[] {0xc2, 0xd8, 0xe2}) {
                text.write(lead);
                text.write(b);
                if (lead == 0xe2) {
                    text.write(0x80);
                    text.write(b);
                    text.write(0x81);
                    text.write(b);
                }
            }
        }
        byte[] input = text.toByteArray();
        ByteArrayOutputStream byteByByte = new ByteArrayOutputStream();
        ControlCharacterFilter single = new ControlCharacterFilter(byteByByte);
        for (byte b : input) {
            single.write(b);
        }
        single.close();
        ByteArrayOutputStream whole = new ByteArrayOutputStream();
        ControlCharacterFilter bulk = new ControlCharacterFilter(whole);
        bulk.write(input, 0, input.length);
        bulk.close();
        assertEquals(byteByByte.toString(StandardCharsets.ISO_8859_1), whole.toString(StandardCharsets.ISO_8859_1));
        assertEquals(false, whole.toString(StandardCharsets.ISO_8859_1).contains("\u001b"), "sanity: ESC escaped");
    }

    @Test
    void aCharacterSplitAcrossWritesIsStillSeen() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ControlCharacterFilter filter = new ControlCharacterFilter(bytes);
        byte[] rlo = "\u202e".getBytes(StandardCharsets.UTF_8);
        byte[] csi = "\u009b".getBytes(StandardCharsets.UTF_8);
        for (byte b : rlo) {
            filter.write(new byte[] {b}, 0, 1);
            filter.flush();
        }
        filter.write(csi[0]);
        filter.write(csi[1]);
        filter.close();
        assertEquals("\\u202e\\x9b", bytes.toString(StandardCharsets.UTF_8));
    }
}
