package dev.infertop.ffi;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * A file that infertop, running as root, reads although someone else controls it (a library the target
 * mapped, a snapshot directory): opened so that a FIFO or device put in its place can neither block the
 * open nor be read, checked to be a regular file of bounded size, and identified by device and inode.
 *
 * <p>{@code open(2)} with O_NONBLOCK returns at once even for a FIFO without a writer; the check is made on
 * the opened descriptor (through /proc/self/fd, which is the descriptor's own file), so no swap between a
 * check and the open can slip a FIFO in. The channel is then opened through the same /proc/self/fd link: the
 * very file that was checked.
 */
public record RegularFile(FileChannel channel, long sizeBytes, long device, long inode) implements AutoCloseable {

    /**
     * Opens {@code path} for reading (following symbolic links when {@code followLinks}); refuses anything
     * but a regular file of at most {@code maxBytes} bytes with an {@link IOException} that says why.
     */
    public static RegularFile open(Path path, long maxBytes, boolean followLinks) throws IOException {
        int fd = LibC.openNonBlocking(path.toString(), followLinks);
        try {
            Path self = Path.of("/proc/self/fd", Integer.toString(fd));
            Map<String, Object> attributes = Files.readAttributes(self, "unix:mode,size,dev,ino");
            int mode = (Integer) attributes.get("mode");
            if ((mode & 0xf000) != 0x8000) { // S_IFMT, S_IFREG
                throw new FileSystemException(path.toString(), null, "not a regular file (" + kind(mode) + ")");
            }
            long size = (Long) attributes.get("size");
            if (size > maxBytes) {
                throw new FileSystemException(path.toString(), null, "too large (" + size + " bytes, at most "
                        + maxBytes + " read)");
            }
            FileChannel channel = FileChannel.open(self, StandardOpenOption.READ);
            return new RegularFile(channel, size, (Long) attributes.get("dev"), (Long) attributes.get("ino"));
        } finally {
            LibC.closeQuietly(fd);
        }
    }

    /** Whether {@code path} is a regular file itself (not a link to one), without opening it. */
    public static boolean isPlainRegularFile(Path path) {
        return Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS);
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
