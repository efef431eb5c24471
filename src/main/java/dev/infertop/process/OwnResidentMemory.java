package dev.infertop.process;

import dev.infertop.ffi.LibC;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * This JVM's resident memory, for the live view's header at every snapshot: /proc/self/statm's second field
 * (pages), read at offset 0 of a descriptor kept open, which makes the kernel write the line anew each time. Its
 * single line of numbers replaces /proc/self/status, whose fifty-odd lines were decoded into strings and searched
 * every tick. Live view thread only.
 */
public final class OwnResidentMemory implements AutoCloseable {
    private static final Path STATM = Path.of("/proc/self/statm");
    private final ByteBuffer buffer = ByteBuffer.allocate(128);
    private final long pageBytes = LibC.pageSize();
    private FileChannel statm;

    /** The resident set in bytes; IOException where /proc is unreadable or not as expected. */
    public long bytes() throws IOException {
        if (statm == null) {
            statm = FileChannel.open(STATM, StandardOpenOption.READ);
        }
        buffer.clear();
        int read = statm.read(buffer, 0);
        return parseResidentPages(buffer.array(), Math.max(0, read)) * pageBytes;
    }

    /** Field 2 of a statm line ("size resident shared text lib data dt", in pages). */
    static long parseResidentPages(byte[] line, int length) throws IOException {
        int i = 0;
        while (i < length && line[i] != ' ') {
            i++; // size
        }
        i++;
        long pages = 0;
        int digits = 0;
        for (; i < length && line[i] >= '0' && line[i] <= '9' && digits < 18; i++, digits++) {
            pages = pages * 10 + (line[i] - '0');
        }
        if (digits == 0 || (i < length && line[i] != ' ' && line[i] != '\n')) {
            throw new IOException("unexpected /proc/self/statm");
        }
        return pages;
    }

    @Override
    public void close() {
        if (statm != null) {
            try {
                statm.close();
            } catch (IOException ignored) {
                // a /proc descriptor: nothing was written through it
            }
            statm = null;
        }
    }
}
