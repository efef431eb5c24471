package dev.infertop.model;

import java.util.Random;

/**
 * Strings a target could choose for its names, from a seeded generator, and what no sanitised text may hold,
 * spelled out here from {@link SafeText}'s documentation rather than computed by it: the property tests of
 * every sink of target-chosen text (SafeText itself, metric labels, JSON Lines) check against this list.
 */
public final class HostileText {
    private HostileText() {}

    /** Characters that act, or hide, in a terminal, a log, a dashboard or a page, by name. */
    private static final int[] NAMED = {
            0x00, 0x07, 0x08, 0x09, 0x0a, 0x0d, 0x1b, 0x7f, 0x85, 0x9b, 0x9d, // NUL BEL BS HT LF CR ESC DEL NEL CSI OSC
            0xad,                                                          // soft hyphen
            0x061c, 0x200e, 0x200f,                                        // bidi marks ALM LRM RLM
            0x202a, 0x202b, 0x202c, 0x202d, 0x202e,                        // embeddings, overrides
            0x2066, 0x2067, 0x2068, 0x2069,                                // isolates
            0x200b, 0x200c, 0x200d, 0x2060, 0xfeff,                        // zero widths
            0x2028, 0x2029,                                                // line, paragraph separators
            0xe0001, 0xe0020, 0xe0041, 0xe007f,                            // tags
            0xe000, 0xf8ff, 0xf0000, 0x10fffd,                             // private use
            0xfdd0, 0xfffe, 0xffff, 0x1fffe, 0x10ffff,                     // non-characters
            0x0378, 0x50000,                                               // unassigned
    };
    /** Text that must come through as it is, and text that looks like an escape already. */
    private static final String[] PLAIN = {"llama", "MUL_MAT", "/m/model.gguf", "\\x1b", "\\u202e", "\\u{e0001}",
            "\\", "\"", "'", "名前", "é", "ß", "Ω", "😀", "a\u0301", "{", "}", "=", ",", " ", "..."};

    /** The code points no sanitised text may hold: C0, DEL, C1, and the invisible ones SafeText documents. */
    public static boolean forbidden(int cp) {
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
            return true;
        }
        if (cp == 0xad || cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e)
                || (cp >= 0x2066 && cp <= 0x2069) || (cp >= 0x200b && cp <= 0x200d) || cp == 0x2060 || cp == 0xfeff
                || cp == 0x2028 || cp == 0x2029 || (cp >= 0xe0000 && cp <= 0xe007f) || (cp >= 0xd800 && cp <= 0xdfff)) {
            return true;
        }
        // The rest of SafeText's list by Unicode category: format, separators, private use, unassigned (and so
        // the non-characters). A surrogate code point in a String's code points is one without its pair.
        return switch (Character.getType(cp)) {
            case Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SURROGATE,
                 Character.PRIVATE_USE, Character.UNASSIGNED -> true;
            default -> false;
        };
    }

    /** The first forbidden code point of {@code text} as U+XXXX, or null when there is none. */
    public static String firstForbidden(String text, String allowed) {
        return text.codePoints().filter(cp -> forbidden(cp) && allowed.indexOf(cp) < 0).mapToObj(
                cp -> String.format("U+%04X", cp)).findFirst().orElse(null);
    }

    /**
     * A string of up to {@code maxUnits} UTF-16 units mixing plain text, named hostile characters, any UTF-16
     * unit (lone surrogates included), surrogate pairs in and out of order, and any code point.
     */
    public static String next(Random random, int maxUnits) {
        int units = random.nextInt(maxUnits + 1);
        StringBuilder out = new StringBuilder(units + 8);
        while (out.length() < units) {
            switch (random.nextInt(8)) {
                case 0, 1 -> out.append(PLAIN[random.nextInt(PLAIN.length)]);
                case 2, 3 -> out.appendCodePoint(NAMED[random.nextInt(NAMED.length)]);
                case 4 -> out.append((char) random.nextInt(0x10000));
                case 5 -> out.append((char) (0xd800 + random.nextInt(0x800))); // a surrogate, often alone
                case 6 -> out.append((char) (0xdc00 + random.nextInt(0x400))).append((char) (0xd800 + random.nextInt(0x400)));
                default -> out.appendCodePoint(random.nextInt(Character.MAX_CODE_POINT + 1));
            }
        }
        return out.toString();
    }
}
