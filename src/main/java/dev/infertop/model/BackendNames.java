package dev.infertop.model;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * GGML backend GUID → display name, read from config/backends.conf (shipped in the jar) and then the
 * user's ~/.config/infertop/backends.conf. A lookup is a scan of a handful of entries, with no allocation,
 * because it runs once per graph event. Unknown GUIDs get their hex form.
 */
public final class BackendNames {
    private final List<long[]> guids = new ArrayList<>();
    private final List<String> names = new ArrayList<>();

    public static BackendNames load() {
        BackendNames names = new BackendNames();
        try (InputStream shipped = BackendNames.class.getResourceAsStream("/dev/infertop/config/backends.conf")) {
            if (shipped != null) {
                names.read(new InputStreamReader(shipped, StandardCharsets.UTF_8), "backends.conf (built in)");
            }
            String home = System.getenv("XDG_CONFIG_HOME");
            Path user = (home != null ? Path.of(home) : Path.of(System.getProperty("user.home"), ".config"))
                    .resolve("infertop/backends.conf");
            if (Files.isReadable(user)) {
                try (Reader reader = Files.newBufferedReader(user)) {
                    names.read(reader, user.toString());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    public static BackendNames parse(String text) {
        BackendNames names = new BackendNames();
        try {
            names.read(new StringReader(text), "text");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    private void read(Reader source, String origin) throws IOException {
        BufferedReader lines = new BufferedReader(source);
        String line;
        int number = 0;
        while ((line = lines.readLine()) != null) {
            number++;
            String text = line.strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            String[] fields = text.split("\\s+", 2);
            if (fields.length != 2 || fields[0].length() != 32 || !fields[0].matches("[0-9a-fA-F]{32}")) {
                throw new IllegalArgumentException(origin + ":" + number
                        + ": expected 32 hex digits and a name, got: " + text);
            }
            put(HexFormat.fromHexDigitsToLong(fields[0], 0, 16), HexFormat.fromHexDigitsToLong(fields[0], 16, 32),
                    fields[1].strip());
        }
    }

    private void put(long high, long low, String name) {
        for (int i = 0; i < guids.size(); i++) {
            if (guids.get(i)[0] == high && guids.get(i)[1] == low) {
                names.set(i, name); // later files override earlier ones
                return;
            }
        }
        guids.add(new long[] {high, low});
        names.add(name);
    }

    /** The configured name, or null when the GUID is not configured. */
    public String nameOrNull(long guidHigh, long guidLow) {
        for (int i = 0; i < guids.size(); i++) {
            long[] guid = guids.get(i);
            if (guid[0] == guidHigh && guid[1] == guidLow) {
                return names.get(i);
            }
        }
        return null;
    }

    public String name(long guidHigh, long guidLow) {
        String name = nameOrNull(guidHigh, guidLow);
        if (name != null) {
            return name;
        }
        if (guidHigh == 0 && guidLow == 0) {
            return "unknown";
        }
        return "guid:" + HexFormat.of().toHexDigits(guidHigh) + HexFormat.of().toHexDigits(guidLow);
    }
}
