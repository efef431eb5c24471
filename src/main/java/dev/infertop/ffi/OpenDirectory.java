package dev.infertop.ffi;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A directory opened once, by a path no symbolic link may take part in (openat2(2) with RESOLVE_NO_SYMLINKS),
 * and from then on only the names directly inside it: created, opened, written, chmod-ed, renamed and unlinked
 * relative to its fd ({@code *at} calls, {@code fchmod} on the fds opened), never by a path the kernel resolves
 * again. Whoever swaps a name meanwhile changes that name only: a write lands in the file this fd created, a
 * chmod on the fd it opened, a rename stays inside this directory. Every open adds O_NOFOLLOW, O_NONBLOCK and
 * O_CLOEXEC: a link is refused, a FIFO or device put at a name never blocks an open and is never written.
 */
public final class OpenDirectory implements AutoCloseable {
    private final int fd;
    private final Path path;
    private boolean closed;

    private OpenDirectory(int fd, Path path) {
        this.fd = fd;
        this.path = path.toAbsolutePath().normalize(); // for messages: "." would say nothing
    }

    /** What statx(2) says of a directory or a name: its owner, its mode bits with the type, its identity. */
    public record Stat(int uid, int mode, long device, long inode) {
        public boolean isDirectory() {
            return (mode & 0xf000) == 0x4000;
        }

        public boolean isRegularFile() {
            return (mode & 0xf000) == 0x8000;
        }

        public boolean isSymbolicLink() {
            return (mode & 0xf000) == 0xa000;
        }
    }

    /** The path this directory was opened by (for messages only: nothing is resolved by it again). */
    public Path path() {
        return path;
    }

    /** The path of a name inside it, for messages. */
    public Path path(String name) {
        return path.resolve(name);
    }

    /**
     * Opens the directory {@code path} (relative ones from the working directory) read-only; a symbolic link
     * anywhere in it is refused with ELOOP's one line. Where the kernel lacks openat2 (before Linux 5.6, or a
     * seccomp filter that refuses it) the path is walked one component at a time with openat(O_NOFOLLOW), which
     * refuses the same links.
     */
    public static OpenDirectory open(Path path) throws IOException {
        String text = path.toString().isEmpty() ? "." : path.toString();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment how = arena.allocate(24, 8); // struct open_how { u64 flags, mode, resolve; }
            // No O_NOFOLLOW: RESOLVE_NO_SYMLINKS refuses a link at the end too, with ELOOP (O_NOFOLLOW would
            // make that ENOTDIR, which says less).
            how.set(JAVA_LONG, 0, (long) (LibC.O_RDONLY | LibC.O_DIRECTORY | LibC.O_CLOEXEC | LibC.O_NONBLOCK));
            how.set(JAVA_LONG, 8, 0L);
            how.set(JAVA_LONG, 16, LibC.RESOLVE_NO_SYMLINKS | LibC.RESOLVE_NO_MAGICLINKS);
            long fd = (long) LibC.openat2$handle().invokeExact(state, LibC.SYS_OPENAT2, LibC.AT_FDCWD,
                    arena.allocateFrom(text), how, 24L);
            if (fd >= 0) {
                return new OpenDirectory((int) fd, path);
            }
            int errno = Errno.read(state);
            if (errno != Errno.ENOSYS && errno != Errno.EPERM) {
                throw failure(path, errno, "open");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return walk(path);
    }

    /**
     * Opens the directory {@code path} as named, links in it followed (a directory the user named, such as
     * --dag's): resolved this once, everything after is relative to the fd.
     */
    public static OpenDirectory openFollowingLinks(Path path) throws IOException {
        String text = path.toString().isEmpty() ? "." : path.toString();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int fd = (int) LibC.openat$handle().invokeExact(state, LibC.AT_FDCWD, arena.allocateFrom(text),
                    LibC.O_RDONLY | LibC.O_DIRECTORY | LibC.O_NONBLOCK | LibC.O_CLOEXEC, 0);
            if (fd < 0) {
                throw failure(path, Errno.read(state), "open");
            }
            return new OpenDirectory(fd, path);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** openat2's refusal of links done by hand: each component opened with O_NOFOLLOW from the one before. */
    private static OpenDirectory walk(Path path) throws IOException {
        OpenDirectory current = new OpenDirectory(openAt(LibC.AT_FDCWD, path.isAbsolute() ? "/" : ".",
                LibC.O_RDONLY | LibC.O_DIRECTORY, 0, path), path.isAbsolute() ? path.getRoot() : Path.of(""));
        try {
            for (Path component : path) {
                String name = component.toString();
                if (name.equals(".")) {
                    continue;
                }
                OpenDirectory next = current.openDirectory(name);
                current.close();
                current = next;
            }
            return new OpenDirectory(current.detach(), path);
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }

    private int detach() {
        closed = true;
        return fd;
    }

    /** The directory itself, from its fd. */
    public Stat stat() throws IOException {
        return statx("", LibC.AT_EMPTY_PATH, path);
    }

    /** The name inside it as it is (a link itself, not its target), or null when there is none. */
    public Stat statEntry(String name) throws IOException {
        try {
            return statx(name, LibC.AT_SYMLINK_NOFOLLOW, path(name));
        } catch (NoSuchFileException missing) {
            return null;
        }
    }

    private Stat statx(String name, int flags, Path shown) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment buffer = arena.allocate(LibC.STATX_BYTES, 8);
            int rc = (int) LibC.statx$handle().invokeExact(state, fd, arena.allocateFrom(name), flags,
                    LibC.STATX_BASIC_STATS, buffer);
            if (rc != 0) {
                throw failure(shown, Errno.read(state), "stat");
            }
            // SAFETY: statx filled the 256-byte struct statx it was given; the offsets are its fixed layout.
            long device = ((long) buffer.get(JAVA_INT, 136) << 32) | (buffer.get(JAVA_INT, 140) & 0xffffffffL);
            return new Stat(buffer.get(JAVA_INT, 20), buffer.get(JAVA_SHORT, 28) & 0xffff, device,
                    buffer.get(JAVA_LONG, 32));
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** mkdirat(2): whether it made {@code name} (false: something, of any kind, has that name already). */
    public boolean makeDirectory(String name, int mode) throws IOException {
        checkName(name);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int rc = (int) LibC.mkdirat$handle().invokeExact(state, fd, arena.allocateFrom(name), mode);
            if (rc == 0) {
                return true;
            }
            int errno = Errno.read(state);
            if (errno == Errno.EEXIST) {
                return false;
            }
            throw failure(path(name), errno, "create directory");
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The directory {@code name} inside this one, opened without following a link there. */
    public OpenDirectory openDirectory(String name) throws IOException {
        checkName(name);
        try {
            return new OpenDirectory(openAt(fd, name, LibC.O_RDONLY | LibC.O_DIRECTORY, 0, path(name)), path(name));
        } catch (FileSystemException notDirectory) {
            Stat entry = statEntry(name); // O_NOFOLLOW|O_DIRECTORY says ENOTDIR of a link: say it is one
            if (entry != null && entry.isSymbolicLink()) {
                throw failure(path(name), Errno.ELOOP, "open");
            }
            throw notDirectory;
        }
    }

    /**
     * A new regular file {@code name} (O_CREAT|O_EXCL: whatever has that name, a link, a FIFO, a file, fails
     * with FileAlreadyExistsException), created with {@code mode} less the umask; written through its fd.
     */
    public FileOutput createFile(String name, int mode) throws IOException {
        checkName(name);
        return new FileOutput(openAt(fd, name, LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL, mode, path(name)),
                path(name));
    }

    private static int openAt(int directory, String name, int flags, int mode, Path shown) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int opened = (int) LibC.openat$handle().invokeExact(state, directory, arena.allocateFrom(name),
                    flags | LibC.O_NOFOLLOW | LibC.O_NONBLOCK | LibC.O_CLOEXEC, mode);
            if (opened < 0) {
                throw failure(shown, Errno.read(state), "open");
            }
            return opened;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** fchmod(2) of the directory itself. */
    public void chmod(int mode) throws IOException {
        fchmod(fd, mode, path);
    }

    static void fchmod(int fd, int mode, Path shown) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int rc = (int) LibC.fchmod$handle().invokeExact(state, fd, mode);
            if (rc != 0) {
                throw failure(shown, Errno.read(state), "chmod");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** unlinkat(2) of a non-directory (a link itself); false when there was no such name. */
    public boolean unlink(String name) throws IOException {
        return unlinkAt(name, 0);
    }

    /** unlinkat(2) with AT_REMOVEDIR: an empty directory; false when there was no such name. */
    public boolean removeDirectory(String name) throws IOException {
        return unlinkAt(name, LibC.AT_REMOVEDIR);
    }

    private boolean unlinkAt(String name, int flags) throws IOException {
        checkName(name);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int rc = (int) LibC.unlinkat$handle().invokeExact(state, fd, arena.allocateFrom(name), flags);
            if (rc == 0) {
                return true;
            }
            int errno = Errno.read(state);
            if (errno == Errno.ENOENT) {
                return false;
            }
            throw failure(path(name), errno, "remove");
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The outcome of a rename that must not replace: done, the name taken, or not offered by the file system. */
    public enum Renamed { DONE, NAME_TAKEN, NOREPLACE_UNSUPPORTED }

    /**
     * renameat2(2) of {@code from} to {@code to}, both in this directory, with RENAME_NOREPLACE: a name that
     * exists, of any kind, is never replaced.
     */
    public Renamed renameNoReplace(String from, String to) throws IOException {
        int errno = renameAt(from, to, LibC.RENAME_NOREPLACE);
        return switch (errno) {
            case 0 -> Renamed.DONE;
            case Errno.EEXIST, Errno.ENOTEMPTY -> Renamed.NAME_TAKEN;
            case Errno.EINVAL, Errno.ENOSYS, Errno.EOPNOTSUPP -> Renamed.NOREPLACE_UNSUPPORTED;
            default -> throw failure(path(to), errno, "rename " + from + " to");
        };
    }

    /** rename within this directory, replacing what {@code to} names (a link itself, never its target). */
    public void renameReplacing(String from, String to) throws IOException {
        int errno = renameAt(from, to, 0);
        if (errno != 0) {
            throw failure(path(to), errno, "rename " + from + " to");
        }
    }

    private int renameAt(String from, String to, int flags) {
        checkName(from);
        checkName(to);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int rc = (int) LibC.renameat2$handle().invokeExact(state, fd, arena.allocateFrom(from), fd,
                    arena.allocateFrom(to), flags);
            return rc == 0 ? 0 : Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The names in it (not . and ..), read from a fresh fd of this very directory. */
    public List<String> list() throws IOException {
        int own = openAt(fd, ".", LibC.O_RDONLY | LibC.O_DIRECTORY, 0, path);
        List<String> names = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment dir = (MemorySegment) LibC.fdopendir$handle().invokeExact(state, own);
            if (dir.address() == 0) {
                LibC.closeQuietly(own);
                throw failure(path, Errno.read(state), "list");
            }
            try {
                while (true) {
                    MemorySegment entry = (MemorySegment) LibC.readdir$handle().invokeExact(dir);
                    if (entry.address() == 0) {
                        break;
                    }
                    // SAFETY: readdir returned a struct dirent whose d_name (NUL-terminated, <= 256 bytes) is at 19.
                    String name = entry.reinterpret(LibC.DIRENT_NAME_OFFSET + 256)
                            .getString(LibC.DIRENT_NAME_OFFSET);
                    if (!name.equals(".") && !name.equals("..")) {
                        names.add(name);
                    }
                }
            } finally {
                int ignored = (int) LibC.closedir$handle().invokeExact(dir);
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return names;
    }

    /** How deep {@link #deleteTree} goes: what infertop makes is one level; more is left in place. */
    private static final int MAX_DELETE_DEPTH = 8;

    /**
     * Deletes {@code name} and all under it, walked with fds: each directory opened with
     * openat(O_DIRECTORY|O_NOFOLLOW) from its parent's fd, each entry unlinked from the fd of the directory
     * it is in. A link is removed itself, never followed. Best effort: false when something is left.
     */
    public boolean deleteTree(String name) {
        return deleteTree(name, 0);
    }

    private boolean deleteTree(String name, int depth) {
        try {
            Stat entry = statEntry(name);
            if (entry == null) {
                return true;
            }
            if (!entry.isDirectory()) {
                unlink(name);
                return true;
            }
            if (depth >= MAX_DELETE_DEPTH) {
                return false;
            }
            boolean all = true;
            try (OpenDirectory child = openDirectory(name)) {
                for (String inside : child.list()) {
                    all &= child.deleteTree(inside, depth + 1);
                }
            }
            return all && removeDirectory(name);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void checkName(String name) {
        if (name.isEmpty() || name.indexOf('/') >= 0 || name.indexOf('\0') >= 0 || name.equals("..")) {
            throw new IllegalArgumentException("not a name inside a directory: '" + name + "'");
        }
    }

    /** The one line for a failed call: the path shown, what was tried, and errno's own words. */
    static IOException failure(Path shown, int errno, String what) {
        String file = shown.toString();
        return switch (errno) {
            case Errno.ENOENT -> new NoSuchFileException(file);
            case Errno.EEXIST -> new FileAlreadyExistsException(file);
            case Errno.EACCES, Errno.EPERM -> new java.nio.file.AccessDeniedException(file);
            case Errno.ELOOP -> new FileSystemException(file, null,
                    "a symbolic link is in the way: infertop does not write through links (it runs as root)");
            default -> new FileSystemException(file, null, LibC.strerror(errno));
        };
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            LibC.closeQuietly(fd);
        }
    }

    /**
     * A file this directory created, written through the fd that created it (buffered: one write(2) a 64 KiB),
     * its mode set with fchmod on that fd. Closing it closes the fd.
     */
    public static final class FileOutput extends OutputStream {
        private static final int BUFFER_BYTES = 64 * 1024;
        private final int fd;
        private final Path path;
        private final Arena arena = Arena.ofShared();
        private final MemorySegment buffer = arena.allocate(BUFFER_BYTES);
        private final MemorySegment state = Errno.allocate(arena);
        private int used;
        private boolean closed;

        private FileOutput(int fd, Path path) {
            this.fd = fd;
            this.path = path;
        }

        @Override
        public void write(int b) throws IOException {
            if (used == BUFFER_BYTES) {
                flush();
            }
            buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, used++, (byte) b);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            java.util.Objects.checkFromIndexSize(offset, length, bytes.length);
            while (length > 0) {
                if (used == BUFFER_BYTES) {
                    flush();
                }
                int chunk = Math.min(length, BUFFER_BYTES - used);
                MemorySegment.copy(bytes, offset, buffer, java.lang.foreign.ValueLayout.JAVA_BYTE, used, chunk);
                used += chunk;
                offset += chunk;
                length -= chunk;
            }
        }

        @Override
        public void flush() throws IOException {
            if (closed) {
                throw new IOException(path + ": closed");
            }
            long done = 0;
            while (done < used) {
                long written;
                try {
                    written = (long) LibC.writeWithErrno$handle().invokeExact(state, fd, buffer.asSlice(done),
                            used - done);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
                if (written < 0) {
                    int errno = Errno.read(state);
                    if (errno == Errno.EINTR) {
                        continue;
                    }
                    throw failure(path, errno, "write");
                }
                done += written;
            }
            used = 0;
        }

        /** fchmod(2) on this file's fd: its mode exactly (the umask does not apply). */
        public void chmod(int mode) throws IOException {
            flush();
            fchmod(fd, mode, path);
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            try {
                flush();
            } finally {
                closed = true;
                LibC.closeQuietly(fd);
                arena.close();
            }
        }
    }
}
