package dev.infertop.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The GGML runtimes whose graphs infertop can read tokens from, each described as data: which tensor names (by
 * prefix) are its token embedding, its positions, its mask, its output, its encoder input. Read from
 * config/runtimes.conf (shipped in the jar) and then the user's ~/.config/infertop/runtimes.conf, one line each:
 * {@code RUNTIME KIND NAME-PREFIX}. So a third runtime is a few lines of a file, not a change of the token layer:
 * the probes match whatever prefixes these lines give (the `graph_names` map, bpf.GraphNames).
 *
 * <p>A prefix two runtimes both name (llama.cpp and an engine that loads the same GGUF files) belongs to the first
 * that named it; the records then say that runtime.
 */
public final class GraphRuntimes {
    /** The prefix bytes the probes compare (GRAPH_NAME_BYTES in native/events.h, one byte kept for the NUL). */
    public static final int MAX_PREFIX_BYTES = 47;
    /** Prefixes all descriptions may name together (GRAPH_NAMES_MAX). */
    public static final int MAX_NAMES = 64;

    /** One name a description gives: {@code runtime} is the 1-based index of its runtime in {@link #runtimes}. */
    public record Name(int runtime, GraphNameKind kind, String prefix) {}

    private final List<String> runtimes = new ArrayList<>();
    private final List<Name> names = new ArrayList<>();

    /** The descriptions {@code source}'s lines give (io.ConfigFiles.graphRuntimes(): shipped, then the user's). */
    public static GraphRuntimes from(ConfigFile.Source source) {
        GraphRuntimes runtimes = new GraphRuntimes();
        source.read(runtimes::line);
        return runtimes;
    }

    public static GraphRuntimes parse(String text) {
        GraphRuntimes runtimes = new GraphRuntimes();
        ConfigFile.readText(text, runtimes::line);
        return runtimes;
    }

    private void line(String text, String where) {
        String[] fields = text.split("\\s+");
        if (fields.length != 3) {
            throw new IllegalArgumentException(where + ": expected RUNTIME KIND NAME-PREFIX, got: " + text);
        }
        GraphNameKind kind = GraphNameKind.ofWord(fields[1]);
        if (kind == null) {
            throw new IllegalArgumentException(where + ": unknown kind '" + fields[1] + "' (one of "
                    + String.join(", ", java.util.Arrays.stream(GraphNameKind.values()).map(GraphNameKind::word)
                    .toList()) + ")");
        }
        String prefix = fields[2];
        if (prefix.length() > MAX_PREFIX_BYTES || !prefix.matches("[\\x21-\\x7e]+")) {
            throw new IllegalArgumentException(where + ": a name prefix is 1 to " + MAX_PREFIX_BYTES
                    + " printable ASCII characters, got: " + prefix);
        }
        if (!fields[0].matches("[A-Za-z0-9._+-]{1,32}")) {
            throw new IllegalArgumentException(where + ": a runtime's name is 1 to 32 of A-Z a-z 0-9 . _ + -, got: "
                    + fields[0]);
        }
        int runtime = runtimes.indexOf(fields[0]) + 1;
        if (runtime == 0) {
            runtimes.add(fields[0]);
            runtime = runtimes.size();
        }
        for (Name name : names) {
            if (name.prefix.equals(prefix)) {
                return; // named already: the first runtime keeps it
            }
        }
        if (names.size() == MAX_NAMES) {
            throw new IllegalArgumentException(where + ": more than " + MAX_NAMES + " names in all");
        }
        names.add(new Name(runtime, kind, prefix));
    }

    /** Every name, in the order given. */
    public List<Name> names() {
        return List.copyOf(names);
    }

    /** The runtime a record's {@code runtime} field says (1-based), or "unknown" for 0 or an index past the list. */
    public String runtimeName(int runtime) {
        return runtime >= 1 && runtime <= runtimes.size() ? runtimes.get(runtime - 1) : "unknown";
    }

    /** The runtimes' names, in the order first given. */
    public List<String> runtimes() {
        return List.copyOf(runtimes);
    }
}
