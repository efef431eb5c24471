package dev.infertop.io;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * Files infertop writes at names someone else can predict (the DAG of key d, --dag, the model writer's
 * output, target.log), written so that a link planted at such a name in a shared directory cannot turn a
 * root write into a write of any file: a name that is a symbolic link is refused with one line; content goes
 * to a fresh file created with {@code O_CREAT|O_EXCL|O_NOFOLLOW} under an unguessable name next to it, then
 * renamed over the name (rename replaces a link that appears meanwhile, it never writes through it).
 * {@link #replace} does all of it through the fd of the directory, opened once, and writes and fchmods the
 * file through the fd that created it ({@link WritableDirectory}). What carries the target's data is written
 * with {@link FileAccess}'s exact mode.
 */
public final class OutputFiles {
    private OutputFiles() {}

    private static final SecureRandom RANDOM = new SecureRandom();

    /** What writes a file's content. */
    @FunctionalInterface
    public interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    /** A refusal to write through a link: the message is the one line for the user. */
    public static final class LinkRefused extends IOException {
        LinkRefused(Path file) {
            super(file + " is a symbolic link: infertop does not write through links (it runs as root); remove it"
                    + " or choose another name");
        }
    }

    /** Throws {@link LinkRefused} when {@code file} is a symbolic link (dangling or not). */
    public static void refuseLink(Path file) throws LinkRefused {
        if (Files.isSymbolicLink(file)) {
            throw new LinkRefused(file);
        }
    }

    /**
     * A new, empty file next to {@code file}, named {@code .NAME.RANDOM.tmp}, created exclusively without
     * following links: nobody could have prepared it.
     */
    public static Path freshSibling(Path file) throws IOException {
        return freshSibling(file, false);
    }

    /**
     * As {@link #freshSibling(Path)}, created 0600 (the umask can only take from that): readable by nobody
     * else while its content is written, whatever mode it gets once complete.
     */
    private static Path freshSibling(Path file, boolean ownerOnly) throws IOException {
        Path absolute = file.toAbsolutePath();
        for (int attempt = 0; ; attempt++) {
            byte[] random = new byte[8];
            RANDOM.nextBytes(random);
            Path temporary = absolute.resolveSibling("." + absolute.getFileName() + "."
                    + HexFormat.of().formatHex(random) + ".tmp");
            try {
                if (ownerOnly) {
                    Files.newByteChannel(temporary, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS), OWNER_ONLY).close();
                } else {
                    Files.newOutputStream(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS).close();
                }
                return temporary;
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 3) {
                    throw e;
                }
            }
        }
    }

    private static final java.nio.file.attribute.FileAttribute<?> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    /**
     * Writes {@code content} to a fresh sibling and renames it over {@code file}; a link there is refused. The
     * file gets the mode the umask gives (for infertop's own caches and the model writer's output).
     */
    public static void replace(Path file, Content content) throws IOException {
        replace(file, null, content);
    }

    /**
     * As {@link #replace(Path, Content)}, for a file that carries the target's data: private while it is
     * written, then {@code access}'s file mode exactly (0600 or 0644), whatever the umask.
     *
     * <p>The directory is opened once; the fresh file is created in it with O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK
     * relative to its fd, written and fchmod-ed through the fd that created it, and renamed over the name
     * within that directory: whoever swaps the temporary name meanwhile (in a directory they own) can move
     * their own entry to the name, never redirect root's write, mode or rename elsewhere.
     */
    public static void replace(Path file, FileAccess access, Content content) throws IOException {
        Path parent = file.getParent() == null ? Path.of(".") : file.getParent();
        String name = file.getFileName().toString();
        try (WritableDirectory directory = WritableDirectory.openNamed(parent)) {
            if (directory.isSymbolicLink(name)) {
                throw new LinkRefused(file);
            }
            String temporary = null;
            for (int attempt = 0; temporary == null; attempt++) {
                String candidate = "." + name + "." + WritableDirectory.randomHex() + ".tmp";
                try {
                    directory.writeFile(candidate, access, content);
                    temporary = candidate;
                } catch (FileAlreadyExistsException e) {
                    if (attempt >= 3) {
                        throw e;
                    }
                }
            }
            boolean moved = false;
            try {
                if (directory.isSymbolicLink(name)) {
                    throw new LinkRefused(file);
                }
                directory.renameReplacing(temporary, name);
                moved = true;
            } finally {
                if (!moved) {
                    directory.unlink(temporary);
                }
            }
        }
    }

    /**
     * Sets {@code path}'s mode exactly, never through a link (a link put in its place meanwhile fails the call
     * instead of lending its target the mode).
     */
    public static void setPermissions(Path path, Set<java.nio.file.attribute.PosixFilePermission> permissions)
            throws IOException {
        Files.getFileAttributeView(path, java.nio.file.attribute.PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS).setPermissions(permissions);
    }

    /** Renames {@code temporary} to {@code file}, replacing what is there (a link itself, never its target). */
    public static void moveOver(Path temporary, Path file) throws IOException {
        refuseLink(file);
        try {
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot rename " + temporary + " to " + file + ": " + e.getMessage());
        }
    }
}
