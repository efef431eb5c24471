package dev.infertop.ffi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PipeEndTest {
    @TempDir
    Path dir;

    @Test
    void aFifosWriteEndSeesItsReaderGoOnceItIsClosed() throws Throwable {
        Path fifo = dir.resolve("fifo");
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) LibC.mkfifo$handle().invokeExact(Errno.allocate(arena), arena.allocateFrom(fifo.toString()),
                    0600);
            assertEquals(0, rc, "mkfifo");
        }
        int reader = LibC.openNonBlocking(fifo.toString(), false);
        int writer = LibC.openNoFollow(fifo.toString(), LibC.O_WRONLY | LibC.O_NONBLOCK, 0);
        try {
            PipeEnd end = new PipeEnd(writer);
            assertFalse(end.readerGone(), "a reader holds the other end");
            assertFalse(end.readerGone(), "asked again: the same");
            LibC.closeQuietly(reader);
            reader = -1;
            assertTrue(end.readerGone(), "POLLERR once the read end is closed");
        } finally {
            if (reader >= 0) {
                LibC.closeQuietly(reader);
            }
            LibC.closeQuietly(writer);
        }
    }

    @Test
    void aRegularFileNeverHasItsReaderGone() throws Exception {
        Path file = Files.writeString(dir.resolve("out.txt"), "");
        int fd = LibC.openNoFollow(file.toString(), LibC.O_WRONLY, 0);
        try {
            assertFalse(new PipeEnd(fd).readerGone());
        } finally {
            LibC.closeQuietly(fd);
        }
    }
}
