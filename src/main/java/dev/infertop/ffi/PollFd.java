package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One {@code struct pollfd}, asked without waiting: poll(2) with a timeout of 0 on one descriptor. Allocated once
 * and reused, so asking allocates nothing; one thread at a time (its owner synchronizes where it is shared).
 */
final class PollFd {
    static final short POLLIN = 0x1;
    static final short POLLERR = 0x8;

    private final MemorySegment pollFd = Arena.ofAuto().allocate(8, 4);
    private final MemorySegment errno = Errno.allocate(Arena.ofAuto());

    /**
     * The events of {@code fd} now among {@code events} and the errors poll always reports (POLLERR, POLLHUP,
     * POLLNVAL): its {@code revents}, 0 where none is pending.
     */
    short pendingNow(int fd, short events) {
        pollFd.set(ValueLayout.JAVA_INT, 0, fd);
        pollFd.set(ValueLayout.JAVA_SHORT, 4, events);
        pollFd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        int ready;
        try {
            ready = (int) LibC.poll$handle().invokeExact(errno, pollFd, 1L, 0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return ready > 0 ? pollFd.get(ValueLayout.JAVA_SHORT, 6) : 0;
    }
}
