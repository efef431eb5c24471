package dev.infertop;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's Architecture section is a newcomer's map: every class, method, BPF handler and file it names along
 * the path of one record must exist where it says, its package table must list every package, and its command
 * list every command. A rename that leaves the map behind fails here, not in a reader's afternoon.
 */
class ReadmeArchitectureTest {
    private static final Path SOURCES = Path.of("src/main/java/dev/infertop");
    private static final Path TESTS = Path.of("src/test/java/dev/infertop");
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
    /** {@code agg.Collector.run}, {@code TraceListener.onDecode}, {@code TokenTotals.decodeTokensPerSecond()}. */
    private static final Pattern JAVA_REFERENCE = Pattern.compile(
            "((?:[a-z][a-z0-9]*\\.)*)([A-Z][A-Za-z0-9]*)(?:\\.([a-z][A-Za-z0-9]*)(?:\\([^)]*\\))?)?");
    private static final Pattern NATIVE_NAME = Pattern.compile("(?:struct )?[a-z][a-z0-9]*(?:_[a-z0-9]+)+|events");

    private static String section() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("\n## Architecture");
        int end = readme.indexOf("\n## ", start + 1);
        assertTrue(start >= 0, "the README has an Architecture section");
        return readme.substring(start, end < 0 ? readme.length() : end);
    }

    /** The numbered path, one hop a step, and the paragraph after it. */
    private static List<String> pathSpans(String section) {
        int from = section.indexOf("\n1. ");
        int to = section.indexOf("\n| package");
        assertTrue(from >= 0 && to > from, "the Architecture section walks one record, then tables the packages");
        List<String> spans = new ArrayList<>();
        Matcher span = CODE_SPAN.matcher(section.substring(from, to));
        while (span.find()) {
            spans.add(span.group(1));
        }
        return spans;
    }

    private static String nativeSources() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("native"))) {
            StringBuilder all = new StringBuilder();
            for (Path file : files.filter(f -> f.toString().endsWith(".c") || f.toString().endsWith(".h")).toList()) {
                all.append(Files.readString(file)).append('\n');
            }
            return all.toString();
        }
    }

    private static List<Path> classFiles(String packagePath, String simpleName) throws IOException {
        List<Path> found = new ArrayList<>();
        for (Path root : List.of(SOURCES, TESTS)) {
            if (!packagePath.isEmpty()) {
                Path file = root.resolve(packagePath.replace('.', '/')).resolve(simpleName + ".java");
                if (Files.exists(file)) {
                    found.add(file);
                }
                continue;
            }
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.getFileName().toString().equals(simpleName + ".java")).forEach(found::add);
            }
        }
        return found;
    }

    @Test
    void everyNameOnTheRecordsPathExists() throws IOException {
        String natives = nativeSources();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (String span : pathSpans(section())) {
            if (span.contains(" ") && !span.startsWith("struct ")) {
                continue; // a screen's words (`decode 69.0 tok/s`), not a name
            }
            if (span.contains("/")) {
                checked++;
                if (!Files.exists(Path.of(span))) {
                    missing.add(span + " (no such file)");
                }
                continue;
            }
            Matcher java = JAVA_REFERENCE.matcher(span);
            if (java.matches()) {
                checked++;
                String packagePath = java.group(1).isEmpty() ? "" : java.group(1).substring(0, java.group(1).length() - 1);
                List<Path> files = classFiles(packagePath, java.group(2));
                if (files.isEmpty()) {
                    missing.add(span + " (no class " + java.group(2) + (packagePath.isEmpty() ? "" : " in " + packagePath) + ")");
                } else if (java.group(3) != null) {
                    Pattern declared = Pattern.compile("[\\w>\\]]\\s+" + java.group(3) + "\\s*\\(");
                    boolean found = false;
                    for (Path file : files) {
                        found |= declared.matcher(Files.readString(file)).find();
                    }
                    if (!found) {
                        missing.add(span + " (no method " + java.group(3) + " declared in " + files + ")");
                    }
                }
                continue;
            }
            if (NATIVE_NAME.matcher(span).matches()) {
                checked++;
                if (!Pattern.compile("\\b" + Pattern.quote(span) + "\\b").matcher(natives).find()) {
                    missing.add(span + " (not in native/)");
                }
            }
        }
        assertTrue(checked >= 20, "the path names its hops (" + checked + " names checked)");
        assertEquals(List.of(), missing, "names on the README's path of one record that the code no longer has");
    }

    /**
     * The paragraph on the session names its stages as {@code session.TargetSession} runs them: each class it names
     * in the session package is one TargetSession uses, so the map and the code it maps move together.
     */
    @Test
    void theSessionsStagesAreTheOnesTargetSessionRuns() throws IOException {
        String section = section();
        int from = section.indexOf("The session that builds all this");
        assertTrue(from >= 0, "the Architecture section walks the session's stages");
        String paragraph = section.substring(from, section.indexOf("\n\n", from));
        String session = LayeringTest.codeOnly(Files.readString(SOURCES.resolve("session/TargetSession.java")));
        List<String> unused = new ArrayList<>();
        int named = 0;
        Matcher span = CODE_SPAN.matcher(paragraph);
        while (span.find()) {
            Matcher java = JAVA_REFERENCE.matcher(span.group(1));
            String simple = java.matches() ? java.group(2) : null;
            if (simple == null || !Files.exists(SOURCES.resolve("session/" + simple + ".java"))
                    || simple.equals("TargetSession")) {
                continue;
            }
            named++;
            if (!Pattern.compile("\\b" + simple + "\\b").matcher(session).find()) {
                unused.add(simple);
            }
        }
        assertTrue(named >= 6, "the paragraph names the stages (" + named + " named)");
        assertEquals(List.of(), unused, "stages the README names that TargetSession no longer runs");
    }

    @Test
    void thePackageTableListsEveryPackage() throws IOException {
        Set<String> tabled = new TreeSet<>();
        for (String line : section().lines().filter(l -> l.startsWith("| `")).toList()) {
            Matcher span = CODE_SPAN.matcher(line.substring(0, line.indexOf('|', 1)));
            while (span.find()) {
                tabled.add(span.group(1));
            }
        }
        Set<String> packages;
        try (Stream<Path> dirs = Files.walk(SOURCES)) {
            packages = dirs.filter(d -> Files.exists(d.resolve("package-info.java")))
                    .map(d -> SOURCES.relativize(d).toString().replace('/', '.'))
                    .filter(p -> !p.isEmpty() && !p.contains(".")) // sub-packages are named in their parent's row
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        for (String name : tabled) {
            assertTrue(Files.isDirectory(SOURCES.resolve(name.replace('.', '/'))), "the table's `" + name + "` is a package");
        }
        Set<String> untabled = new TreeSet<>(packages);
        untabled.removeAll(tabled);
        assertEquals(Set.of(), untabled, "packages the README's table leaves out");
    }

    @Test
    void theCommandListNamesEveryCommand() throws IOException {
        String cliRow = section().lines().filter(l -> l.startsWith("| `cli`")).findFirst().orElseThrow();
        Set<String> listed = new TreeSet<>();
        Matcher span = CODE_SPAN.matcher(cliRow.substring(cliRow.indexOf('|', 1)));
        while (span.find()) {
            listed.add(span.group(1));
        }
        Set<String> commands = new TreeSet<>();
        Pattern name = Pattern.compile("@Command\\(name = \"([a-z]+)\"");
        try (Stream<Path> files = Files.list(SOURCES.resolve("cli"))) {
            for (Path file : files.toList()) {
                Matcher m = name.matcher(Files.readString(file));
                while (m.find()) {
                    commands.add(m.group(1));
                }
            }
        }
        assertTrue(commands.size() >= 8, "commands found: " + commands);
        assertEquals(commands, listed, "the README's cli row against the picocli commands");
    }
}
