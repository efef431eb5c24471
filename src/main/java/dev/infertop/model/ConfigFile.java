package dev.infertop.model;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * infertop's line-based config format (config/NAME shipped in the jar, then the user's ~/.config/infertop/NAME,
 * whose lines come later and so win): blank lines and # comments skipped, each other line handed over stripped,
 * with "origin:line" for messages. Reading the files is io.ConfigFiles' (the model does no I/O of its own).
 */
public final class ConfigFile {
    private ConfigFile() {}

    /** Takes one meaningful line; throws IllegalArgumentException naming {@code where} for a bad one. */
    @FunctionalInterface
    public interface LineHandler {
        void line(String text, String where);
    }

    /** Where a config's lines come from: it hands each to the handler (io.ConfigFiles reads the files). */
    @FunctionalInterface
    public interface Source {
        void read(LineHandler handler);
    }

    public static void readText(String text, LineHandler handler) {
        try {
            read(new StringReader(text), "text", handler);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Hands {@code source}'s meaningful lines to {@code handler}, each with "origin:line". */
    public static void read(Reader source, String origin, LineHandler handler) throws IOException {
        BufferedReader lines = new BufferedReader(source);
        String line;
        int number = 0;
        while ((line = lines.readLine()) != null) {
            number++;
            String text = line.strip();
            if (!text.isEmpty() && !text.startsWith("#")) {
                handler.line(text, origin + ":" + number);
            }
        }
    }
}
