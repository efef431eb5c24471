package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SafeText over many generated hostile strings (lone and swapped surrogates, every named control and invisible
 * character, any code point), against {@link HostileText#forbidden}: nothing forbidden comes out, text with
 * nothing forbidden comes out as it is, the result is a fixed point, encodes to UTF-8 and stays bounded.
 */
class SafeTextPropertyTest {
    private static final int STRINGS = 20_000;
    /** Longest escape, {@code \\u{10ffff}}, per UTF-16 unit of input (a pair is two units). */
    private static final int MAX_GROWTH = 10;

    @Test
    void nothingForbiddenComesOutOfAnyString() throws CharacterCodingException {
        Random random = new Random(0x5afe7e47L);
        for (int i = 0; i < STRINGS; i++) {
            String hostile = HostileText.next(random, 64);
            String shown = SafeText.of(hostile);
            String described = describe(hostile);
            assertNull(HostileText.firstForbidden(shown, ""), () -> "in of(" + described + ")");
            assertNull(HostileText.firstForbidden(SafeText.lines(hostile), "\n\t"), () -> "in lines(" + described + ")");
            assertEquals(shown, SafeText.of(shown), () -> "not a fixed point: " + described);
            assertEquals(HostileText.firstForbidden(hostile, "") == null, SafeText.isSafe(hostile), described);
            if (HostileText.firstForbidden(hostile, "") == null) {
                assertEquals(hostile, shown, "safe text is kept as it is");
            }
            assertTrue(shown.length() <= MAX_GROWTH * hostile.length(), described);
            StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(shown)); // no unpaired surrogate left
        }
    }

    @Test
    void everyCodePointAloneIsShownSafely() {
        StringBuilder one = new StringBuilder(2);
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
            one.setLength(0);
            one.appendCodePoint(cp);
            String shown = SafeText.of(one.toString());
            if (HostileText.forbidden(cp)) {
                int code = cp;
                assertTrue(shown.startsWith("\\x") || shown.startsWith("\\u"), () -> String.format("U+%04X", code));
                assertTrue(shown.chars().allMatch(c -> c >= 0x20 && c < 0x7f), shown);
            } else {
                assertEquals(one.toString(), shown);
            }
        }
    }

    /** A string as code points, for a failure message that is itself safe to print. */
    static String describe(String text) {
        StringBuilder out = new StringBuilder();
        text.codePoints().forEach(cp -> out.append(cp >= 0x20 && cp < 0x7f ? String.valueOf((char) cp)
                : String.format("<U+%04X>", cp)));
        return out.toString();
    }
}
