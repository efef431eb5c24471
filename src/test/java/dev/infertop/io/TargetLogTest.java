package dev.infertop.io;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** target.log: opened without following links, appended through /proc/PID/fd/N, rotated when large. */
class TargetLogTest {
    @TempDir
    Path dir;

    /** What the command's shell does with the path it is given: {@code exec >>"$INFERTOP_TARGET_LOG"}. */
    private static void shellAppends(String path, String line) throws Exception {
        Process shell = new ProcessBuilder("/bin/sh", "-c", "echo \"$1\" >>\"$0\"", path, line).start();
        assertEquals(0, shell.waitFor());
    }

    @Test
    void theShellAppendsToTheFileInfertopOpened() throws Exception {
        Path log = dir.resolve("target.log");
        Files.writeString(log, "earlier run\n");
        try (TargetLog opened = TargetLog.open(log)) {
            // Whatever is put at the name meanwhile, the shell reaches the file that was opened.
            Path moved = dir.resolve("moved.log");
            Files.move(log, moved);
            Path victim = dir.resolve("victim");
            Files.writeString(victim, "precious\n");
            Files.createSymbolicLink(log, victim);
            shellAppends(opened.procPath(), "from the command");
            assertEquals("precious\n", Files.readString(victim));
            assertEquals("earlier run\nfrom the command\n", Files.readString(moved));
        }
    }

    @Test
    void aLinkAtTheNameIsRefusedWithOneLine() throws IOException {
        Path victim = dir.resolve("victim");
        Files.writeString(victim, "precious\n");
        Path log = dir.resolve("target.log");
        Files.createSymbolicLink(log, victim);
        IOException refused = assertThrows(IOException.class, () -> TargetLog.open(log));
        assertEquals(log + " is a symbolic link: infertop does not write through links (it runs as root); remove"
                + " it or choose another name", refused.getMessage());
        assertEquals("precious\n", Files.readString(victim));
    }

    @Test
    void aFifoAtTheNameIsRefusedWithoutHanging() throws IOException {
        Path log = dir.resolve("target.log");
        LibC.mkfifo(log.toString(), 0600);
        IOException refused = assertThrows(IOException.class, () -> TargetLog.open(log));
        assertEquals(log + " is not a regular file: remove it", refused.getMessage());
    }

    @Test
    void aLargeLogIsRotatedToOneOlderGeneration() throws Exception {
        Path log = dir.resolve("target.log");
        Path older = dir.resolve("target.log.1");
        Files.writeString(older, "oldest\n");
        try (var channel = java.nio.channels.FileChannel.open(log, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            channel.write(java.nio.ByteBuffer.wrap(new byte[] {'x'}), TargetLog.ROTATE_BYTES); // sparse, just past the cap
        }
        try (TargetLog opened = TargetLog.open(log)) {
            shellAppends(opened.procPath(), "new run");
        }
        assertEquals("new run\n", Files.readString(log));
        assertEquals(TargetLog.ROTATE_BYTES + 1, Files.size(older));
        try (var files = Files.list(dir)) {
            assertEquals(List.of("target.log", "target.log.1"), files.map(p -> p.getFileName().toString()).sorted().toList());
        }
        // A small log is kept and appended to.
        try (TargetLog opened = TargetLog.open(log)) {
            shellAppends(opened.procPath(), "next run");
        }
        assertEquals("new run\nnext run\n", Files.readString(log));
        assertFalse(Files.isSymbolicLink(log));
        assertTrue(Files.isRegularFile(log));
    }
}
