package dev.infertop.io;

import dev.infertop.ffi.LibC;
import dev.infertop.ffi.OpenDirectory;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A directory infertop writes in although it runs as root (snapshot directories; the DAG file's directory):
 * opened once, then written only through its fd ({@link OpenDirectory}). {@link #openTrusted} also refuses a
 * directory another user could rearrange under a writer, with one line:
 * <ul>
 * <li>it must be owned by infertop's effective uid or by root (the owner of a directory may rename and delete
 *     anything in it, sticky or not);</li>
 * <li>and writable by nobody else (no group or other write bit), or sticky (like /tmp, 1777): there others
 *     may create names but not rename or remove ours, so what infertop writes goes into a directory it makes
 *     itself with a fresh name (mkdirat fails on any name that exists), and the finished one is renamed with
 *     RENAME_NOREPLACE: an existing name, whoever made it, is never reused or replaced.</li>
 * </ul>
 * ACLs are not looked at: a directory whose ACL lets others write in it is the owner's choice to make so.
 */
public final class WritableDirectory implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int S_ISVTX = 01000;
    private static final int GROUP_OR_OTHER_WRITE = 0022;

    private final OpenDirectory directory;
    /** Others may create names here (sticky and group/other-writable): no name is ever reused. */
    private final boolean othersCreateNames;

    private WritableDirectory(OpenDirectory directory, boolean othersCreateNames) {
        this.directory = directory;
        this.othersCreateNames = othersCreateNames;
    }

    /** The refusal of a directory by the rule above: the line for the user. */
    public static final class Refused extends IOException {
        Refused(String line) {
            super(line);
        }
    }

    /**
     * Why a directory owned by {@code ownerUid} with {@code mode} (its permission bits, type bits ignored) is
     * no place for a writer running as {@code euid}, in one line; null when it is one.
     */
    public static String refusal(Path shown, int ownerUid, int mode, int euid) {
        if (ownerUid != euid && ownerUid != 0) {
            return shown + " is owned by uid " + ownerUid + ", not by " + (euid == 0 ? "root" : "uid " + euid
                    + " (infertop's) or root") + ": its owner could swap what infertop writes there";
        }
        int othersWrite = mode & GROUP_OR_OTHER_WRITE;
        if (othersWrite != 0 && (mode & S_ISVTX) == 0) {
            String who = othersWrite == GROUP_OR_OTHER_WRITE ? "its group and others"
                    : (othersWrite & 0020) != 0 ? "its group" : "others";
            return shown + " is writable by " + who + " and not sticky (mode " + String.format("%04o", mode & 07777)
                    + "): another user could swap what infertop writes there";
        }
        return null;
    }

    /**
     * Opens {@code path} (relative: from the working directory) with no symbolic link anywhere in it, making
     * the directories missing at its end with {@code access}'s directory mode, each from the fd of the one
     * above; refuses it, or any directory on the way that existed, by {@link #refusal}.
     */
    public static WritableDirectory openTrusted(Path path, FileAccess access) throws IOException {
        return openTrusted(path, access, true);
    }

    /** As {@link #openTrusted(Path, FileAccess)} for a directory that must exist already (nothing is made). */
    public static WritableDirectory openTrustedExisting(Path path) throws IOException {
        return openTrusted(path, FileAccess.PRIVATE, false);
    }

    private static WritableDirectory openTrusted(Path path, FileAccess access, boolean makeMissing)
            throws IOException {
        Path normalized = path.normalize();
        List<String> missing = new ArrayList<>();
        Path existing = normalized;
        OpenDirectory current;
        while (true) {
            try {
                current = OpenDirectory.open(existing == null ? Path.of(".") : existing);
                break;
            } catch (NoSuchFileException absent) {
                if (!makeMissing || existing == null || existing.getFileName() == null) {
                    throw absent;
                }
                missing.addFirst(existing.getFileName().toString());
                existing = existing.getParent();
            }
        }
        try {
            int euid = LibC.geteuid();
            boolean othersCreate = check(current, euid);
            for (String name : missing) {
                boolean made = current.makeDirectory(name, 0700);
                OpenDirectory next = current.openDirectory(name);
                current.close();
                current = next;
                if (made) {
                    OpenDirectory.Stat stat = current.stat();
                    if (stat.uid() != euid) { // made by us: only a kernel that lies says otherwise
                        throw new Refused(current.path() + " is not the directory infertop made");
                    }
                    current.chmod(access.directoryMode());
                    othersCreate = false;
                } else {
                    othersCreate = check(current, euid); // made by someone else meanwhile: judged like any
                }
            }
            return new WritableDirectory(current, othersCreate);
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }

    /** Refuses {@code directory} by the rule; whether others may create names in it. */
    private static boolean check(OpenDirectory directory, int euid) throws IOException {
        OpenDirectory.Stat stat = directory.stat();
        String why = refusal(directory.path(), stat.uid(), stat.mode(), euid);
        if (why != null) {
            throw new Refused(why);
        }
        return (stat.mode() & GROUP_OR_OTHER_WRITE) != 0;
    }

    /**
     * Opens {@code path} as named (links in it followed: a directory the user named), with no ownership rule:
     * for a single file replaced there ({@link OutputFiles#replace}), written through the fd that creates it.
     */
    public static WritableDirectory openNamed(Path path) throws IOException {
        return new WritableDirectory(OpenDirectory.openFollowingLinks(path), true);
    }

    /** The path it was opened by, for messages. */
    public Path path() {
        return directory.path();
    }

    /**
     * A new directory {@code PREFIX + random hex} inside this one, made with mkdirat 0700 (never one that
     * existed) and opened without following links.
     */
    public WritableDirectory createFresh(String prefix) throws IOException {
        for (int attempt = 0; attempt < 8; attempt++) {
            String name = prefix + randomHex();
            if (directory.makeDirectory(name, 0700)) {
                OpenDirectory made = directory.openDirectory(name);
                return new WritableDirectory(made, false);
            }
        }
        throw new FileAlreadyExistsException(directory.path(prefix + "*").toString(), null,
                "8 random names were all taken");
    }

    /** The name of this directory inside the one it was made in (for those {@link #createFresh} made). */
    public String name() {
        return directory.path().getFileName().toString();
    }

    static String randomHex() {
        byte[] random = new byte[8];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /**
     * Creates {@code name} (O_EXCL: nothing there may exist), writes {@code content} through its fd and sets
     * {@code access}'s file mode exactly with fchmod, or leaves the umask's mode on a 0666 file when
     * {@code access} is null; on failure the file is removed.
     */
    public void writeFile(String name, FileAccess access, OutputFiles.Content content) throws IOException {
        OpenDirectory.FileOutput out = directory.createFile(name, access == null ? 0666 : 0600);
        boolean done = false;
        try {
            content.writeTo(out);
            if (access != null) {
                out.chmod(access.fileMode());
            }
            out.close();
            done = true;
        } finally {
            if (!done) {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // the write's own failure is the one reported
                }
                try {
                    directory.unlink(name);
                } catch (IOException ignored) {
                    // best effort: the caller's cleanup removes the directory it is in
                }
            }
        }
    }

    /** fchmod of the directory itself to {@code access}'s directory mode. */
    public void chmod(FileAccess access) throws IOException {
        directory.chmod(access.directoryMode());
    }

    /**
     * Renames {@code from} to {@code to} in this directory unless {@code to} exists (of any kind): whether it
     * did. Where the file system has no RENAME_NOREPLACE, a directory nobody else writes in is renamed after a
     * look at the name; one others create names in is refused.
     */
    public boolean renameNoReplace(String from, String to) throws IOException {
        switch (directory.renameNoReplace(from, to)) {
            case DONE:
                return true;
            case NAME_TAKEN:
                return false;
            default:
                if (othersCreateNames) {
                    throw new IOException(directory.path() + ": the file system cannot rename without replacing"
                            + " (RENAME_NOREPLACE), which a directory others write in needs");
                }
                if (directory.statEntry(to) != null) {
                    return false;
                }
                directory.renameReplacing(from, to);
                return true;
        }
    }

    /** Renames {@code from} over {@code to} in this directory (a link at {@code to} is replaced, not followed). */
    public void renameReplacing(String from, String to) throws IOException {
        directory.renameReplacing(from, to);
    }

    /** Whether {@code name} is a symbolic link itself. */
    public boolean isSymbolicLink(String name) throws IOException {
        OpenDirectory.Stat stat = directory.statEntry(name);
        return stat != null && stat.isSymbolicLink();
    }

    /** Whether {@code name} is owned by this process's effective uid (false when it does not exist). */
    public boolean ownedByUs(String name) throws IOException {
        OpenDirectory.Stat stat = directory.statEntry(name);
        return stat != null && stat.uid() == LibC.geteuid();
    }

    /** unlinkat of a non-directory; false when there was none. */
    public boolean unlink(String name) throws IOException {
        return directory.unlink(name);
    }

    /** Deletes {@code name} and all under it, walked with fds; best effort. */
    public boolean deleteTree(String name) {
        return directory.deleteTree(name);
    }

    /** The names in it. */
    public List<String> list() throws IOException {
        return directory.list();
    }

    @Override
    public void close() {
        directory.close();
    }
}
