package dev.infertop.metrics;

import dev.infertop.model.SafeText;

/**
 * Label values that come from the traced process (its command name, model path, op names, library build):
 * untrusted, so bounded and made visible before they reach a scraper, a dashboard or an alert, by the one
 * sanitiser {@link SafeText} (control characters as {@code \xNN}, invisible format characters as
 * {@code \\uNNNN}); past {@link #MAX_CHARS} characters (counted before escaping) the middle gives way to "...", keeping the
 * start and the end (a model path's file name). A backslash is kept, as SafeText keeps it everywhere: the exposition
 * format's writer escapes it as {@code \\} (as it does quotes and line feeds), and Prometheus reads one backslash
 * back; escaping it here too would make a scraper store {@code \x5c} where every other output shows {@code \}.
 */
public final class LabelValues {
    private LabelValues() {}

    public static final int MAX_CHARS = 128;
    private static final int HEAD_CHARS = 40;

    public static String sanitize(String value) {
        if (value == null) {
            return "";
        }
        int[] codePoints = value.codePoints().toArray();
        if (codePoints.length <= MAX_CHARS) {
            return escape(codePoints, 0, codePoints.length);
        }
        int tail = MAX_CHARS - HEAD_CHARS - 3;
        return escape(codePoints, 0, HEAD_CHARS) + "..." + escape(codePoints, codePoints.length - tail,
                codePoints.length);
    }

    private static String escape(int[] codePoints, int from, int to) {
        return SafeText.of(new String(codePoints, from, to - from));
    }
}
