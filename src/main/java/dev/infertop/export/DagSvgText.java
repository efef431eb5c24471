package dev.infertop.export;

import dev.infertop.model.SafeText;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Text for the DAG picture. Tensor names come from the traced process, so every string is made visible before
 * it is drawn by the one sanitiser, {@link SafeText} (control and invisible format characters as escapes; it
 * also covers every character XML cannot hold: lone surrogates, U+FFFE, U+FFFF); the result is capped in
 * length. Then XML escaping keeps markup out.
 */
final class DagSvgText {
    /** The most characters a drawn name takes: longer ones end in "…". */
    static final int NAME_MAX_CHARS = 64;

    private DagSvgText() {}

    /** {@code raw} as drawn: every character visible, at most {@code maxChars} of them. */
    static String shown(String raw, int maxChars) {
        List<String> pieces = new ArrayList<>();
        int chars = 0;
        // Stop as soon as the text is known to be too long: a hostile name costs at most maxChars steps.
        for (int i = 0; i < raw.length() && chars <= maxChars; ) {
            int cp = raw.codePointAt(i);
            i += Character.charCount(cp);
            String piece = visible(cp);
            pieces.add(piece);
            chars += piece.length();
        }
        StringBuilder out = new StringBuilder();
        if (chars <= maxChars) {
            pieces.forEach(out::append);
            return out.toString();
        }
        int kept = 0;
        for (String piece : pieces) {
            if (kept + piece.length() > maxChars - 1) {
                break;
            }
            out.append(piece);
            kept += piece.length();
        }
        return out.append('…').toString();
    }

    /** One code point as it can be drawn and read ({@link SafeText}: also every character XML cannot hold). */
    private static String visible(int cp) {
        return SafeText.of(Character.toString(cp));
    }

    /** Already {@link #shown} text escaped for an XML text node or attribute value. */
    static String xml(String shown) {
        StringBuilder out = new StringBuilder(shown.length() + 16);
        for (int i = 0; i < shown.length(); i++) {
            char c = shown.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** Layer numbers as runs: "0–15, 17, 19–21"; past {@code maxChars} it ends in "…". */
    static String runs(List<Integer> numbers, int maxChars) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < numbers.size(); ) {
            int j = i;
            while (j + 1 < numbers.size() && numbers.get(j + 1) == numbers.get(j) + 1) {
                j++;
            }
            out.append(out.isEmpty() ? "" : ", ").append(numbers.get(i));
            if (j > i) {
                out.append(j == i + 1 ? ", " : "–").append(numbers.get(j));
            }
            if (out.length() > maxChars) {
                return out.substring(0, maxChars - 1) + "…";
            }
            i = j + 1;
        }
        return out.toString();
    }

    /** A time the way the DOT labels show it: µs below a millisecond. */
    static String time(long ns) {
        return DagDotWriter.time(ns);
    }

    static String ms(long ns) {
        return String.format(Locale.ROOT, "%.3f ms", ns / 1e6);
    }
}
