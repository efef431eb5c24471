package dev.infertop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** man/infertop.1 read for the tests that hold code and documentation together. */
public final class ManPage {
    private ManPage() {}

    public static String text() {
        try {
            return Files.readString(Path.of("man/infertop.1"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The section {@code .SH title} up to the next {@code .SH}; fails when there is none. */
    public static String section(String man, String title) {
        String start = "\n.SH " + title + "\n";
        int from = man.indexOf(start);
        if (from < 0) {
            throw new AssertionError("man/infertop.1 has no section " + title);
        }
        int to = man.indexOf("\n.SH ", from + start.length());
        return man.substring(from + 1, to < 0 ? man.length() : to + 1);
    }

    /**
     * The names tagged by the {@code .TP} entries of {@code section}: the {@code .B} line after each {@code .TP},
     * font escapes and label sets ({@code {pid, command}}) removed, split at commas.
     */
    public static List<String> tagNames(String section) {
        List<String> names = new ArrayList<>();
        String[] lines = section.split("\n");
        for (int i = 0; i + 1 < lines.length; i++) {
            if (lines[i].equals(".TP") && lines[i + 1].startsWith(".B ")) {
                String tag = plain(lines[i + 1].substring(3)).replaceAll("\\{[^}]*}", "");
                for (String name : tag.split(",")) {
                    if (!name.isBlank()) {
                        names.add(name.strip());
                    }
                }
            }
        }
        return names;
    }

    /** {@code roff} without its font escapes, {@code \-} as a hyphen, {@code \&} gone. */
    public static String plain(String roff) {
        return roff.replaceAll("\\\\f[BIRP]", "").replace("\\-", "-").replace("\\&", "");
    }
}
