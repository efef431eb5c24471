package dev.infertop.metrics;

/**
 * Label values that come from the traced process (its command name, model path, op names, library build):
 * untrusted, so bounded and made visible before they reach a scraper, a dashboard or an alert. Control
 * characters (C0, DEL, C1) become {@code \xNN}, invisible format characters (bidirectional overrides, zero
 * widths, line and paragraph separators) {@code \\uNNNN}, and a backslash {@code \x5c}, so what is shown
 * reads back unambiguously; past {@link #MAX_CHARS} characters (counted before escaping) the middle gives way to "...", keeping the
 * start and the end (a model path's file name).
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
        StringBuilder out = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            int c = codePoints[i];
            int type = Character.getType(c);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\\') {
                out.append(String.format("\\x%02x", c));
            } else if (type == Character.FORMAT || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR || type == Character.SURROGATE
                    || type == Character.PRIVATE_USE || type == Character.UNASSIGNED) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.appendCodePoint(c);
            }
        }
        return out.toString();
    }
}
