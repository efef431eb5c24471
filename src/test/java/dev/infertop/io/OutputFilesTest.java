package dev.infertop.io;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Writes at predictable names never go through a link planted there. */
class OutputFilesTest {
    @TempDir
    Path dir;

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void replaceWritesANewFileAndOverwritesAnOldOne() throws IOException {
        Path file = dir.resolve("dag.dot");
        OutputFiles.replace(file, out -> out.write("one".getBytes(StandardCharsets.UTF_8)));
        OutputFiles.replace(file, out -> out.write("two".getBytes(StandardCharsets.UTF_8)));
        assertEquals("two", Files.readString(file));
        assertEquals(List.of("dag.dot"), names()); // no temporary left
    }

    @Test
    void aFileWithTargetDataGetsItsModeExactlyAndIsNeverReadableByOthersWhileWritten() throws Exception {
        Path file = dir.resolve("dag.dot");
        Umask.with(0, () -> {
            OutputFiles.replace(file, FileAccess.PRIVATE, out -> {
                try (Stream<Path> files = Files.list(dir)) {
                    Path temporary = files.filter(p -> p.getFileName().toString().endsWith(".tmp")).findFirst()
                            .orElseThrow();
                    assertEquals("rw-------", Umask.mode(temporary), "private while written, even under umask 0");
                }
                out.write(1);
            });
            assertEquals("rw-------", Umask.mode(file));
            OutputFiles.replace(file, FileAccess.SHARED, out -> out.write(2));
            assertEquals("rw-r--r--", Umask.mode(file));
        });
        Umask.with(0077, () -> {
            OutputFiles.replace(file, FileAccess.SHARED, out -> out.write(3));
            assertEquals("rw-r--r--", Umask.mode(file), "shared whatever the umask");
        });
        assertEquals(List.of("dag.dot"), names());
    }

    @Test
    void aLinkAtTheNameIsRefusedAndItsTargetUntouched() throws IOException {
        Path victim = dir.resolve("victim");
        Files.writeString(victim, "precious");
        Path file = dir.resolve("dag.dot");
        Files.createSymbolicLink(file, victim);
        IOException refused = assertThrows(IOException.class,
                () -> OutputFiles.replace(file, out -> out.write("x".getBytes(StandardCharsets.UTF_8))));
        assertEquals(file + " is a symbolic link: infertop does not write through links (it runs as root); remove"
                + " it or choose another name", refused.getMessage());
        assertEquals("precious", Files.readString(victim));
        assertTrue(Files.isSymbolicLink(file));
        // A dangling link (pointing where a file would be created) is refused the same way.
        Path dangling = dir.resolve("other.dot");
        Files.createSymbolicLink(dangling, dir.resolve("would-be-created"));
        assertThrows(OutputFiles.LinkRefused.class, () -> OutputFiles.replace(dangling, out -> out.write(1)));
        assertTrue(Files.notExists(dir.resolve("would-be-created")));
    }

    @Test
    void aFreshSiblingHasAnUnguessableNameAndIsCreatedExclusively() throws IOException {
        Path file = dir.resolve("m.gguf");
        Path one = OutputFiles.freshSibling(file);
        Path two = OutputFiles.freshSibling(file);
        assertNotEquals(one, two);
        assertTrue(one.getFileName().toString().matches("\\.m\\.gguf\\.[0-9a-f]{16}\\.tmp"), one.toString());
        assertTrue(Files.isRegularFile(one, LinkOption.NOFOLLOW_LINKS));
        assertEquals(0, Files.size(one));
    }

    @Test
    void aFailedWriteLeavesNoTemporaryAndTheOldFile() throws IOException {
        Path file = dir.resolve("dag.dot");
        Files.writeString(file, "old");
        assertThrows(IOException.class, () -> OutputFiles.replace(file, out -> {
            out.write("partial".getBytes(StandardCharsets.UTF_8));
            throw new IOException("disk full");
        }));
        assertEquals("old", Files.readString(file));
        assertEquals(List.of("dag.dot"), names());
    }
}
