package dev.infertop.ffi;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file that infertop, running as root, reads although someone else controls it (a library the target
 * mapped, a snapshot directory): looked at before it is opened, so that a FIFO or device put in its place is
 * never opened at all, checked to be a regular file of bounded size (and, where the caller knows which file it
 * must be, that device and inode), and identified by device and inode.
 *
 * <p>The name is resolved once, with {@code O_PATH}: that names the file without opening it (no device driver's
 * open routine runs, as /dev/watchdog's would arm the watchdog; no FIFO waits for a writer; no terminal can
 * become the controlling one). The check is made on that descriptor (statx), and only a regular file that
 * passes it is opened for reading, through /proc/self/fd/N: the very file that was checked, whatever the name
 * names by then.
 */
public record RegularFile(FileChannel channel, long sizeBytes, long device, long inode) implements AutoCloseable {

    /** Which file the caller expects (device as st_dev, inode): checked before the file is opened. */
    @FunctionalInterface
    public interface Identity {
        boolean matches(long device, long inode);
    }

    /**
     * Opens {@code path} for reading (following symbolic links when {@code followLinks}); refuses anything
     * but a regular file of at most {@code maxBytes} bytes with an {@link IOException} that says why.
     */
    public static RegularFile open(Path path, long maxBytes, boolean followLinks) throws IOException {
        return open(path, maxBytes, followLinks, null);
    }

    /**
     * As {@link #open(Path, long, boolean)}, and refuses a file that {@code expected} (when not null) does not
     * match, before opening it: a {@link FileSystemException} whose reason says "not the file expected".
     */
    public static RegularFile open(Path path, long maxBytes, boolean followLinks, Identity expected)
            throws IOException {
        int fd = LibC.openPathOnly(path.toString(), followLinks);
        try {
            LibC.FileStatus status = check(path, fd, expected);
            long size = status.sizeBytes();
            if (size > maxBytes) {
                throw new FileSystemException(path.toString(), null, "too large (" + size + " bytes, at most "
                        + maxBytes + " read)");
            }
            // A regular file, checked: opening it by its descriptor's /proc link runs no driver and cannot block.
            FileChannel channel = FileChannel.open(Path.of("/proc/self/fd", Integer.toString(fd)),
                    StandardOpenOption.READ);
            return new RegularFile(channel, size, status.device(), status.inode());
        } finally {
            LibC.closeQuietly(fd);
        }
    }

    /**
     * An O_PATH descriptor of {@code path} (nothing opened) that names a regular file {@code expected} (when not
     * null) matches; the caller closes it ({@link LibC#closeQuietly}). For a name handed to the kernel
     * ({@code /proc/self/fd/N}) rather than read.
     */
    public static int namedOnly(Path path, boolean followLinks, Identity expected) throws IOException {
        int fd = LibC.openPathOnly(path.toString(), followLinks);
        try {
            check(path, fd, expected);
            return fd;
        } catch (IOException | RuntimeException e) {
            LibC.closeQuietly(fd);
            throw e;
        }
    }

    private static LibC.FileStatus check(Path path, int fd, Identity expected) throws IOException {
        LibC.FileStatus status = LibC.statx(fd);
        int mode = status.mode();
        if ((mode & 0xf000) != 0x8000) { // S_IFMT, S_IFREG
            throw new FileSystemException(path.toString(), null, notRegular(mode));
        }
        if (expected != null && !expected.matches(status.device(), status.inode())) {
            throw new FileSystemException(path.toString(), null, NOT_EXPECTED + " (it is inode " + status.inode()
                    + ")");
        }
        return status;
    }

    /** The start of the reason {@link #open(Path, long, boolean, Identity)} gives for a file not expected. */
    public static final String NOT_EXPECTED = "not the file expected";

    /** The reason given for a file of {@code mode} (st_mode) that is not a regular file. */
    public static String notRegular(int mode) {
        return "not a regular file (" + kind(mode) + ")";
    }

    private static String kind(int mode) {
        return switch (mode & 0xf000) {
            case 0x1000 -> "a FIFO";
            case 0x2000 -> "a character device";
            case 0x4000 -> "a directory";
            case 0x6000 -> "a block device";
            case 0xa000 -> "a symbolic link";
            case 0xc000 -> "a socket";
            default -> "mode 0" + Integer.toOctalString(mode);
        };
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
