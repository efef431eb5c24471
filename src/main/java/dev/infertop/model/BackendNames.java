package dev.infertop.model;

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

    /** The names {@code source}'s lines give (io.ConfigFiles.backendNames(): the shipped file, then the user's). */
    public static BackendNames from(ConfigFile.Source source) {
        BackendNames names = new BackendNames();
        source.read(names::line);
        return names;
    }

    public static BackendNames parse(String text) {
        BackendNames names = new BackendNames();
        ConfigFile.readText(text, names::line);
        return names;
    }

    private void line(String text, String where) {
        String[] fields = text.split("\\s+", 2);
        if (fields.length != 2 || fields[0].length() != 32 || !fields[0].matches("[0-9a-fA-F]{32}")) {
            throw new IllegalArgumentException(where + ": expected 32 hex digits and a name, got: " + text);
        }
        put(HexFormat.fromHexDigitsToLong(fields[0], 0, 16), HexFormat.fromHexDigitsToLong(fields[0], 16, 32),
                fields[1].strip());
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

    /** The GUID (high, low) configured for {@code name}, or null. */
    public long[] guidOf(String name) {
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i).equals(name)) {
                return guids.get(i).clone();
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
