package dev.infertop;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every doc comment documents the declaration under it: one stacked on another (the first left behind when
 * its method moved) or closing a block documents nothing, and a reader takes it for the next one's.
 */
class JavadocsHaveOwnersTest {
    private static final Pattern DOC = Pattern.compile("/\\*\\*.*?\\*/", Pattern.DOTALL);

    static List<Integer> orphanLines(String source) {
        List<Integer> lines = new ArrayList<>();
        Matcher m = DOC.matcher(source);
        while (m.find()) {
            String next = source.substring(m.end()).stripLeading();
            if (next.startsWith("/*") || next.startsWith("}") || next.isEmpty()) {
                lines.add(1 + (int) source.substring(0, m.start()).chars().filter(c -> c == '\n').count());
            }
        }
        return lines;
    }

    @Test
    void noDocCommentIsStackedOrLeftBehind() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                for (int line : orphanLines(Files.readString(file))) {
                    found.add(file + ":" + line);
                }
            }
        }
        assertEquals(List.of(), found, "a doc comment with no declaration of its own");
    }

    @Test
    void theCheckFindsAStackedAndATrailingComment() {
        String source = "class A {\n    /** old */\n    /** new */\n    void f() {}\n    /** left */\n}\n";
        assertEquals(List.of(2, 5), orphanLines(source));
    }
}
