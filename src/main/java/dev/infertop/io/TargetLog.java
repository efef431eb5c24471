package dev.infertop.io;

import dev.infertop.ffi.LibC;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The log a launched command's output is appended to (target.log of the live view, --target-log FILE), by
 * infertop, which relays what the command writes into its pipes. infertop opens it once, with
 * {@code O_NOFOLLOW} (a link is refused with one line) and {@code O_NONBLOCK} (a FIFO planted there fails
 * instead of hanging), checks it is a regular file, and writes through {@code /proc/INFERTOP/fd/N}: that name
 * reaches the very file infertop opened, whatever the directory holds by then. Keep it open until the command
 * has started.
 *
 * <p>Bounded across runs: a log larger than {@link #ROTATE_BYTES} when a run starts is renamed to
 * {@code NAME.1} (replacing the previous one), so at most two generations are kept. During a run the log
 * grows with the command's output.
 */
public final class TargetLog implements AutoCloseable {
    /** The size above which the log is rotated when a run starts. */
    public static final long ROTATE_BYTES = 16L << 20;

    private final int fd;
    private boolean closed;

    private TargetLog(int fd) {
        this.fd = fd;
    }

    /** Rotates {@code log} when it is large and opens it for appending; one-line IOException when it cannot. */
    public static TargetLog open(Path log) throws IOException {
        OutputFiles.refuseLink(log);
        if (Files.exists(log, LinkOption.NOFOLLOW_LINKS)) {
            BasicFileAttributes attributes = Files.readAttributes(log, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile()) {
                throw new IOException(log + " is not a regular file: remove it");
            }
            if (attributes.size() > ROTATE_BYTES) {
                // rename(2) replaces a link at NAME.1 itself, never what it points to.
                Files.move(log, log.resolveSibling(log.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        int fd = LibC.openNoFollow(log.toString(), LibC.O_WRONLY | LibC.O_APPEND | LibC.O_CREAT | LibC.O_NONBLOCK, 0600);
        TargetLog opened = new TargetLog(fd);
        if (!Files.isRegularFile(Path.of(opened.procPath()))) {
            opened.close();
            throw new IOException(log + " is not a regular file: remove it");
        }
        return opened;
    }

    /** The name through which the command's shell opens the file infertop opened. */
    public String procPath() {
        return "/proc/" + ProcessHandle.current().pid() + "/fd/" + fd;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            LibC.closeQuietly(fd);
        }
    }
}
