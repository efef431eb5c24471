package dev.infertop.ffi;

/**
 * Whether the reader of a pipe we write to is gone (e.g. {@code infertop --json | head -1} after head's line),
 * known at once from poll(2), which reports POLLERR on a pipe's write end once its read end is closed, instead of
 * at the next write's EPIPE, up to an interval later. A terminal or a file never reports it. One instance per
 * thread: its pollfd is reused, so asking allocates nothing.
 */
public final class PipeEnd {
    private final PollFd pollFd = new PollFd();
    private final int fd;

    public PipeEnd(int fd) {
        this.fd = fd;
    }

    public static PipeEnd standardOutput() {
        return new PipeEnd(1);
    }

    public boolean readerGone() {
        try {
            return (pollFd.pendingNow(fd, (short) 0) & PollFd.POLLERR) != 0; // events: none; errors always come
        } catch (IllegalStateException e) {
            return false;
        }
    }
}
