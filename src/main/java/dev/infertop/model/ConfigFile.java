package dev.infertop.model;

import dev.infertop.ffi.RegularFile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.FileSystemException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * infertop's line-based config files (config/NAME shipped in the jar, then the user's
 * ~/.config/infertop/NAME, whose lines come later and so win): blank lines and # comments skipped, each other
 * line handed over stripped, with "origin:line" for messages.
 */
public final class ConfigFile {
    private ConfigFile() {}

    /** A config file is a few KiB; a user's is read up to this size. */
    static final long MAX_USER_FILE_BYTES = 1 << 20;

    /** Takes one meaningful line; throws IllegalArgumentException naming {@code where} for a bad one. */
    @FunctionalInterface
    public interface LineHandler {
        void line(String text, String where);
    }

    /** Reads the shipped file, then the user's, if present. */
    public static void readShippedThenUser(String name, LineHandler handler) {
        try (InputStream shipped = ConfigFile.class.getResourceAsStream("/dev/infertop/config/" + name)) {
            if (shipped == null) {
                throw new IllegalStateException("config/" + name + " is missing from the jar");
            }
            read(new InputStreamReader(shipped, StandardCharsets.UTF_8), name + " (built in)", handler);
            String home = System.getenv("XDG_CONFIG_HOME");
            Path user = (home != null ? Path.of(home) : Path.of(System.getProperty("user.home"), ".config"))
                    .resolve("infertop").resolve(name);
            if (Files.isReadable(user)) {
                // Opened without blocking and checked (infertop runs as root; under sudo the user's own config
                // may be read): a FIFO there must not hang the start, nor a huge file fill the heap.
                RegularFile opened;
                try {
                    opened = RegularFile.open(user, MAX_USER_FILE_BYTES, true);
                } catch (FileSystemException e) {
                    throw new IllegalArgumentException(user + ": " + e.getReason());
                }
                try (opened; Reader reader = new InputStreamReader(Channels.newInputStream(opened.channel()),
                        StandardCharsets.UTF_8)) {
                    read(reader, user.toString(), handler);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void readText(String text, LineHandler handler) {
        try {
            read(new StringReader(text), "text", handler);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void read(Reader source, String origin, LineHandler handler) throws IOException {
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
