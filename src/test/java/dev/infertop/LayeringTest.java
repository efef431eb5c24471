package dev.infertop;

import dev.infertop.cli.Main;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packages' layering, from the sources: every package has a package-info.java that says what it is for and
 * what it may import ("May import: {@code a}, {@code b}." or "May import: no other infertop package."), each
 * package uses only those (imports and fully qualified names in code; comments and strings do not count), the
 * package graph has no cycle, {@code model} and {@code ffi} use no other infertop package, and the views
 * ({@code view}, {@code tui}) use no aggregator. Package names below are relative to {@code dev.infertop}.
 */
class LayeringTest {
    private static final Path SOURCES = Path.of("src/main/java/dev/infertop");
    private static final Pattern REFERENCE =
            Pattern.compile("\\bdev\\.infertop\\.((?:[a-z][a-z0-9_]*\\.)*[a-z][a-z0-9_]*)\\.(?:[A-Z*])");
    private static final Pattern MAY_IMPORT = Pattern.compile("May import:(.*?)(?:\\}\\.|package\\.)", Pattern.DOTALL);
    private static final Pattern CODE = Pattern.compile("\\{@code ([a-z][a-z0-9_.]*)\\}");

    /** Package → the infertop packages its code uses. */
    private static Map<String, Set<String>> uses() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = packageOf(file.getParent());
                Set<String> used = uses.computeIfAbsent(pkg, k -> new TreeSet<>());
                for (String other : references(Files.readString(file))) {
                    if (!other.equals(pkg)) {
                        used.add(other);
                    }
                }
            }
        }
        return uses;
    }

    private static String packageOf(Path directory) {
        return SOURCES.relativize(directory).toString().replace('/', '.');
    }

    /** The infertop packages {@code source}'s code names, outside comments, strings and character literals. */
    static Set<String> references(String source) {
        Set<String> packages = new TreeSet<>();
        Matcher m = REFERENCE.matcher(codeOnly(source));
        while (m.find()) {
            packages.add(m.group(1));
        }
        return packages;
    }

    /** {@code source} with comments, string and text-block literals and character literals blanked. */
    static String codeOnly(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        int n = source.length();
        while (i < n) {
            char c = source.charAt(i);
            if (source.startsWith("//", i)) {
                int end = source.indexOf('\n', i);
                i = end < 0 ? n : end;
            } else if (source.startsWith("/*", i)) {
                int end = source.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                out.append(' ');
            } else if (source.startsWith("\"\"\"", i)) {
                int end = source.indexOf("\"\"\"", i + 3);
                i = end < 0 ? n : end + 3;
                out.append("\"\"");
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
                    j += source.charAt(j) == '\\' ? 2 : 1;
                }
                i = Math.min(n, j + 1);
                out.append(c).append(c);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** Package → what its package-info.java allows; a package without one maps to null. */
    private static Map<String, Set<String>> allowed(Set<String> packages) throws IOException {
        Map<String, Set<String>> allowed = new TreeMap<>();
        for (String pkg : packages) {
            Path info = SOURCES.resolve(pkg.replace('.', '/')).resolve("package-info.java");
            allowed.put(pkg, Files.isRegularFile(info) ? mayImport(Files.readString(info)) : null);
        }
        return allowed;
    }

    /** The packages a package-info's "May import:" sentence names; null when it has none. */
    static Set<String> mayImport(String packageInfo) {
        Matcher sentence = MAY_IMPORT.matcher(packageInfo);
        if (!sentence.find()) {
            return null;
        }
        String text = sentence.group(0).replaceAll("\\s*\\n\\s*\\*\\s*", " ");
        Set<String> names = new TreeSet<>();
        Matcher code = CODE.matcher(text);
        while (code.find()) {
            names.add(code.group(1));
        }
        return names;
    }

    /** A cycle in {@code graph} as its packages in order, or an empty list. */
    static List<String> cycle(Map<String, Set<String>> graph) {
        Map<String, Integer> state = new HashMap<>(); // absent: unseen, 1: on the path, 2: done
        for (String start : graph.keySet()) {
            Deque<String> path = new ArrayDeque<>();
            List<String> found = visit(start, graph, state, path);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    private static List<String> visit(String node, Map<String, Set<String>> graph, Map<String, Integer> state,
                                      Deque<String> path) {
        Integer seen = state.get(node);
        if (seen != null && seen == 2) {
            return List.of();
        }
        if (seen != null) {
            List<String> cycle = new ArrayList<>();
            boolean in = false;
            for (String p : (Iterable<String>) path::descendingIterator) {
                in |= p.equals(node);
                if (in) {
                    cycle.add(p);
                }
            }
            cycle.add(node);
            return cycle;
        }
        state.put(node, 1);
        path.push(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            List<String> found = visit(next, graph, state, path);
            if (!found.isEmpty()) {
                return found;
            }
        }
        path.pop();
        state.put(node, 2);
        return List.of();
    }

    @Test
    void everyPackageHasAPackageInfoThatSaysWhatItMayImport() throws IOException {
        Map<String, Set<String>> uses = uses();
        assertTrue(uses.size() >= 20, "packages found: " + uses.keySet());
        allowed(uses.keySet()).forEach((pkg, allows) -> {
            assertTrue(allows != null, pkg + ": no package-info.java with a 'May import:' sentence");
            for (String name : allows) {
                assertTrue(uses.containsKey(name), pkg + "'s package-info allows " + name + ", no such package");
            }
        });
    }

    @Test
    void eachPackageUsesOnlyWhatItsPackageInfoAllows() throws IOException {
        Map<String, Set<String>> uses = uses();
        Map<String, Set<String>> allowed = allowed(uses.keySet());
        List<String> breaches = new ArrayList<>();
        uses.forEach((pkg, used) -> {
            Set<String> allows = allowed.get(pkg) == null ? Set.of() : allowed.get(pkg);
            for (String other : used) {
                if (!allows.contains(other)) {
                    breaches.add(pkg + " uses " + other);
                }
            }
        });
        assertEquals(List.of(), breaches, "say why in the package-info, or move the code");
    }

    @Test
    void thePackageGraphHasNoCycle() throws IOException {
        assertEquals(List.of(), cycle(uses()));
    }

    @Test
    void modelAndFfiAreAtTheBottom() throws IOException {
        Map<String, Set<String>> uses = uses();
        assertEquals(Set.of(), uses.get("model"), "model uses other infertop packages");
        assertEquals(Set.of(), uses.get("ffi"), "ffi uses other infertop packages");
    }

    @Test
    void viewsUseNoAggregator() throws IOException {
        Map<String, Set<String>> uses = uses();
        for (String view : List.of("view", "tui")) {
            for (String used : uses.get(view)) {
                assertTrue(!used.equals("agg") && !used.startsWith("agg."), view + " uses " + used);
            }
        }
    }

    /**
     * The wire format ends in {@code event}: past it, code names record kinds and a few capacities and subtypes
     * of {@code EventLayout}, never a payload offset, and reads no raw memory; the decoder's views do that.
     */
    @Test
    void decodingEndsInEvent() throws IOException {
        Pattern layoutName = Pattern.compile("\\bEventLayout\\.([A-Z0-9_]+)|import static dev\\.infertop\\.event"
                + "\\.EventLayout\\.([A-Z0-9_]+);");
        Pattern notOffset = Pattern.compile("EVENT_[A-Z0-9_]+|MAX_EVENT_KIND|MOE_GRAPH|MOE_IDS|MOE_GROUP_HOST_COPY"
                + "|MOE_MAX_ID_BYTES|MOE_PLAN_GROUPS");
        List<String> found = new ArrayList<>();
        for (String pkg : List.of("agg", "agg/graph", "history", "snapshot", "metrics", "export", "view", "tui")) {
            Path dir = SOURCES.resolve(pkg);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String code = codeOnly(Files.readString(file));
                    Matcher m = layoutName.matcher(code);
                    while (m.find()) {
                        String name = m.group(1) != null ? m.group(1) : m.group(2);
                        if (!notOffset.matcher(name).matches()) {
                            found.add(SOURCES.relativize(file) + ": EventLayout." + name);
                        }
                    }
                    if (code.contains("java.lang.foreign")) {
                        found.add(SOURCES.relativize(file) + ": java.lang.foreign");
                    }
                }
            }
        }
        assertEquals(List.of(), found, "wire layout read past the event package");
    }

    @Test
    void theScannerSeesCodeAndOnlyCode() {
        String source = """
                package dev.infertop.view;
                import dev.infertop.model.Snapshot;
                import static dev.infertop.ffi.LibC.trim;
                // dev.infertop.agg.TraceAggregator in a comment
                /* dev.infertop.session.TraceRun in a block */
                class X {
                    String s = "dev.infertop.bpf.ProbeSet";
                    char q = '"';
                    Object o = dev.infertop.history.FlightRecorder.class;
                    String t = \"""
                        Main
                        \""";
                }
                """;
        assertEquals(Set.of("model", "ffi", "history"), references(source));
    }

    @Test
    void aCycleIsFoundAndNamed() {
        Map<String, Set<String>> graph = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"),
                "d", Set.of("a")));
        assertEquals(List.of("a", "b", "c", "a"), cycle(graph));
        assertEquals(List.of(), cycle(Map.of("a", Set.of("b"), "b", Set.of())));
    }

    @Test
    void theMayImportSentenceIsRead() {
        assertEquals(Set.of("model", "process.layout"), mayImport("""
                /**
                 * Role.
                 * <p>
                 * May import: {@code model},
                 * {@code process.layout}. {@code view} is not in this sentence.
                 */"""));
        assertEquals(Set.of(), mayImport(" * May import: no other infertop package. {@code ffi} aside."));
        assertEquals(null, mayImport(" * Nothing said."));
    }
}
