package dev.infertop.io;

import dev.infertop.model.GraphRuntimes;
import dev.infertop.ffi.RegularFile;
import dev.infertop.model.BackendNames;
import dev.infertop.model.ConfigFile;
import dev.infertop.model.CounterSets;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads infertop's config files ({@link ConfigFile}'s format): config/NAME shipped in the jar, then the user's
 * ~/.config/infertop/NAME (or under $XDG_CONFIG_HOME), opened as a file someone else controls.
 */
public final class ConfigFiles {
    private ConfigFiles() {}

    /** A config file is a few KiB; a user's is read up to this size. */
    static final long MAX_USER_FILE_BYTES = 1 << 20;

    /** config/backends.conf, then the user's. */
    public static BackendNames backendNames() {
        return BackendNames.from(handler -> readShippedThenUser("backends.conf", handler));
    }

    /** config/counters.conf, then the user's. */
    public static CounterSets counterSets() {
        return CounterSets.from(handler -> readShippedThenUser("counters.conf", handler));
    }

    /** config/runtimes.conf, then the user's: what each GGML runtime's graph names mean. */
    public static GraphRuntimes graphRuntimes() {
        return GraphRuntimes.from(handler -> readShippedThenUser("runtimes.conf", handler));
    }

    /** Reads the shipped file, then the user's, if present. */
    public static void readShippedThenUser(String name, ConfigFile.LineHandler handler) {
        try (InputStream shipped = ConfigFiles.class.getResourceAsStream("/dev/infertop/config/" + name)) {
            if (shipped == null) {
                throw new IllegalStateException("config/" + name + " is missing from the jar");
            }
            ConfigFile.read(new InputStreamReader(shipped, StandardCharsets.UTF_8), name + " (built in)", handler);
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
                    ConfigFile.read(reader, user.toString(), handler);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
