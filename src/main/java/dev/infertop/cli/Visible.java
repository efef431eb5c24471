package dev.infertop.cli;

/**
 * A name another process controls (its comm), made safe for a terminal line: control characters (C0, DEL,
 * C1) shown as \xNN, never sent raw.
 */
final class Visible {
    private Visible() {}

    static String text(String name) {
        StringBuilder out = new StringBuilder(name.length());
        name.codePoints().forEach(c -> {
            if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
                out.append(String.format("\\x%02x", c));
            } else {
                out.appendCodePoint(c);
            }
        });
        return out.toString();
    }
}
