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
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Files infertop writes at names someone else can predict (the DAG of key d, --dag, the model writer's
 * output, target.log), written so that a link planted at such a name in a shared directory cannot turn a
 * root write into a write of any file: a name that is a symbolic link is refused with one line; content goes
 * to a fresh file created with {@code O_CREAT|O_EXCL|O_NOFOLLOW} (CREATE_NEW + NOFOLLOW_LINKS) under an
 * unguessable name next to it, then renamed over the name (rename replaces a link that appears meanwhile,
 * it never writes through it).
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
        Path absolute = file.toAbsolutePath();
        for (int attempt = 0; ; attempt++) {
            byte[] random = new byte[8];
            RANDOM.nextBytes(random);
            Path temporary = absolute.resolveSibling("." + absolute.getFileName() + "."
                    + HexFormat.of().formatHex(random) + ".tmp");
            try {
                Files.newOutputStream(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                        LinkOption.NOFOLLOW_LINKS).close();
                return temporary;
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 3) {
                    throw e;
                }
            }
        }
    }

    /** Writes {@code content} to a fresh sibling and renames it over {@code file}; a link there is refused. */
    public static void replace(Path file, Content content) throws IOException {
        refuseLink(file);
        Path temporary = freshSibling(file);
        boolean moved = false;
        try {
            try (OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS)) {
                content.writeTo(out);
            }
            moveOver(temporary, file);
            moved = true;
        } finally {
            if (!moved) {
                Files.deleteIfExists(temporary);
            }
        }
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
