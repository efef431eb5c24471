package dev.infertop;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sources explain themselves: a comment says why, not which issue asked for it (the issue tracker is not
 * where a reader of the code looks, and its numbers mean nothing in a copy of the code elsewhere). Run figures
 * and issue numbers belong in the dated measurements document.
 */
class SourcesNameNoIssueTest {
    private static final Pattern ISSUE = Pattern.compile("(?i)\\b(issue|ticket|bug) #?[0-9]+\\b");

    @Test
    void noSourceFileNamesAnIssueNumber() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path root : List.of(Path.of("src/main"), Path.of("native"), Path.of("src/scripts"))) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : files.filter(Files::isRegularFile).filter(SourcesNameNoIssueTest::isSource).toList()) {
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (ISSUE.matcher(lines.get(i)).find()) {
                            found.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), found, "comments say why, not which issue: say the reason instead");
    }

    private static boolean isSource(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(".java") || name.endsWith(".c") || name.endsWith(".h") || name.endsWith(".sh")
                || name.endsWith(".py");
    }
}
