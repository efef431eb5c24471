package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Whether the reader of a pipe we write to is gone (e.g. {@code infertop --json | head -1} after head's line),
 * known at once from poll(2), which reports POLLERR on a pipe's write end once its read end is closed, instead of
 * at the next write's EPIPE, up to an interval later. A terminal or a file never reports it. One instance per
 * thread: its pollfd is reused, so asking allocates nothing.
 */
public final class PipeEnd {
    private static final short POLLERR = 0x8;
    private final MemorySegment pollFd = Arena.ofAuto().allocate(8, 4);
    private final MemorySegment errno = Errno.allocate(Arena.ofAuto());
    private final int fd;

    public PipeEnd(int fd) {
        this.fd = fd;
    }

    public static PipeEnd standardOutput() {
        return new PipeEnd(1);
    }

    public boolean readerGone() {
        pollFd.set(ValueLayout.JAVA_INT, 0, fd);
        pollFd.set(ValueLayout.JAVA_SHORT, 4, (short) 0); // events: none; errors are always reported
        pollFd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        try {
            int ready = (int) LibC.poll$handle().invokeExact(errno, pollFd, 1L, 0);
            return ready > 0 && (pollFd.get(ValueLayout.JAVA_SHORT, 6) & POLLERR) != 0;
        } catch (Throwable t) {
            return false;
        }
    }
}
