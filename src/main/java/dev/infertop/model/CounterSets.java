package dev.infertop.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The counter sets of config/counters.conf, then ~/.config/infertop/counters.conf (a set of the same name
 * there replaces the built-in one). Lines: {@code NAME ARCH LINE_BYTES EVENT...}, ARCH x86_64, arm64 or any,
 * EVENT as {@link CounterEvent#parse}. The default set of an architecture is the first one named for it.
 */
public final class CounterSets {
    private final Map<String, CounterSet> sets = new LinkedHashMap<>();

    /** The sets {@code source}'s lines define (io.ConfigFiles.counterSets(): the shipped file, then the user's). */
    public static CounterSets from(ConfigFile.Source source) {
        CounterSets result = new CounterSets();
        source.read(result::add);
        return result;
    }

    public static CounterSets parse(String text) {
        CounterSets result = new CounterSets();
        ConfigFile.readText(text, result::add);
        return result;
    }

    private void add(String line, String where) {
        String[] words = line.split("\\s+");
        if (words.length < 4) {
            throw new IllegalArgumentException(where + ": expected NAME ARCH LINE_BYTES EVENT..., got '" + line + "'");
        }
        String arch = words[1].toLowerCase(Locale.ROOT);
        if (!arch.equals("x86_64") && !arch.equals("arm64") && !arch.equals("any")) {
            throw new IllegalArgumentException(where + ": architecture '" + words[1] + "': use x86_64, arm64 or any");
        }
        int lineBytes;
        try {
            lineBytes = Integer.parseInt(words[2]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(where + ": line size '" + words[2] + "' is not a byte count");
        }
        List<CounterEvent> events = new ArrayList<>();
        try {
            for (int i = 3; i < words.length; i++) {
                events.add(CounterEvent.parse(words[i]));
            }
            sets.remove(words[0]); // a redefinition replaces the set and takes its place at the end
            sets.put(words[0], new CounterSet(words[0], arch, lineBytes, events));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }

    public List<CounterSet> all() {
        return List.copyOf(sets.values());
    }

    /** The first set for {@code arch} (x86_64 or arm64), else the first for any architecture. */
    public CounterSet defaultFor(String arch) {
        for (CounterSet set : sets.values()) {
            if (set.arch().equals(arch)) {
                return set;
            }
        }
        for (CounterSet set : sets.values()) {
            if (set.arch().equals("any")) {
                return set;
            }
        }
        throw new IllegalArgumentException("no counter set for " + arch + " in counters.conf");
    }

    /**
     * What {@code --counters} names: a set by name, or events separated by commas (an ad-hoc set with
     * {@code lineBytes}, the default set's line size). Null or "auto": the default set of {@code arch}.
     */
    public CounterSet choose(String choice, String arch) {
        CounterSet fallback = defaultFor(arch);
        if (choice == null || choice.isBlank() || choice.equals("auto")) {
            return fallback;
        }
        CounterSet named = sets.get(choice.strip());
        if (named != null) {
            return named;
        }
        List<CounterEvent> events = new ArrayList<>();
        for (String part : choice.split(",")) {
            events.add(CounterEvent.parse(part));
        }
        return new CounterSet("custom", arch, fallback.lineBytes(), events);
    }

    public List<String> names() {
        return List.copyOf(sets.keySet());
    }
}
