package dev.infertop.model;

import java.util.Locale;

/**
 * The one sanitiser for text the traced process (or any other process) controls: its command name and
 * threads' names, library and model paths, tensor and op names read from its memory, names in a snapshot
 * file. infertop runs as root in the operator's terminal, so such text must never reach a terminal, a log or
 * a page with a character that acts instead of showing: an {@code ESC ] 0 ; … BEL} sets the terminal's
 * title, a C1 {@code CSI} (U+009B) starts a control sequence on terminals that honour C1, a C0 or DEL makes
 * Lanterna throw and ends the live view, and a right-to-left override makes {@code fdp.exe} read as
 * {@code exe.pdf}.
 *
 * <p>Every such character is replaced by a visible escape: C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F)
 * by {@code \xNN}; invisible format characters (bidirectional overrides, embeddings, isolates and marks, zero
 * widths, soft hyphen, tags), line and paragraph separators, lone surrogates, private-use, unassigned and
 * non-characters by {@code \\uNNNN} (or {@code \\u{NNNNN}} past the BMP). Everything else, non-ASCII
 * letters and CJK included, is kept, so a valid UTF-8 name reads as it is; escapes are ASCII, one column
 * per character in the live view.
 *
 * <p>A backslash is kept as it is: the result of {@link #of} is a fixed point ({@code of(of(x)) == of(x)}),
 * so text is sanitised where it enters (where the target's bytes become a String) and every sink may apply
 * the same function again as a guard without doubling escapes. The cost is that a name holding the four
 * characters {@code \x1b} reads like one holding ESC; the escape is for reading, not for decoding.
 */
public final class SafeText {
    private SafeText() {}

    /** {@code text} with every character that is not safe to show replaced by a visible escape. */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        int first = firstUnsafe(text);
        if (first < 0) {
            return text; // the common case: no copy, no allocation
        }
        StringBuilder out = new StringBuilder(text.length() + 16);
        out.append(text, 0, first);
        for (int i = first; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            appendShown(out, cp);
        }
        return out.toString();
    }

    /**
     * {@link #of}, keeping line feeds and tabs: for a sink that writes whole lines of infertop's own text
     * (stderr, batch text) with target strings inside.
     */
    public static String lines(String text) {
        if (text == null || firstUnsafe(text) < 0) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\n' || cp == '\t') {
                out.append((char) cp);
            } else {
                appendShown(out, cp);
            }
        }
        return out.toString();
    }

    /** Whether {@code text} can be shown as it is. */
    public static boolean isSafe(String text) {
        return text == null || firstUnsafe(text) < 0;
    }

    /** Whether the code point {@code cp} must be shown as an escape. */
    public static boolean isUnsafe(int cp) {
        if (cp >= 0x20 && cp < 0x7f) {
            return false;
        }
        if (cp < 0x20 || cp <= 0x9f) {
            return true; // C0, DEL, C1
        }
        return switch (Character.getType(cp)) {
            case Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SURROGATE,
                 Character.PRIVATE_USE, Character.UNASSIGNED -> true;
            // U+FFFE, U+FFFF and the like are unassigned, caught above.
            default -> false;
        };
    }

    private static int firstUnsafe(String text) {
        for (int i = 0; i < text.length(); ) {
            char c = text.charAt(i);
            if (c >= 0x20 && c < 0x7f) { // ASCII fast path: one compare per character
                i++;
                continue;
            }
            int cp = text.codePointAt(i);
            if (isUnsafe(cp)) {
                return i;
            }
            i += Character.charCount(cp);
        }
        return -1;
    }

    private static void appendShown(StringBuilder out, int cp) {
        if (!isUnsafe(cp)) {
            out.appendCodePoint(cp);
        } else if (cp <= 0x9f) {
            out.append(String.format(Locale.ROOT, "\\x%02x", cp));
        } else if (cp <= 0xffff) {
            out.append(String.format(Locale.ROOT, "\\u%04x", cp));
        } else {
            out.append(String.format(Locale.ROOT, "\\u{%x}", cp));
        }
    }
}
