package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The few libc calls infertop needs (see the man page named beside each handle), each bound at its first use
 * through a holder class of its own name, as jextract generates them (see {@link LibBpf}): binding all of them
 * at class load was a noticeable part of a start that needs two of them before the probes are attached.
 */
public final class LibC {
    private LibC() {}

    private static final Linker LINKER = Linker.nativeLinker();

    private static MethodHandle bind(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new NativeLibraryMissing("libc lacks " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    public static final int PROT_READ = 0x1;
    public static final int PROT_WRITE = 0x2;
    public static final int MAP_SHARED = 0x01;
    public static final long MAP_FAILED = -1L;
    public static final short POLLIN = 0x1;

    // mmap(2): void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
    private static final class mmap {
        static final MethodHandle HANDLE = bind("mmap",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG), Errno.CAPTURE);
    }

    public static MethodHandle mmap$handle() {
        return mmap.HANDLE;
    }

    // munmap(2): int munmap(void *addr, size_t length)
    private static final class munmap {
        static final MethodHandle HANDLE = bind("munmap",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    }

    public static MethodHandle munmap$handle() {
        return munmap.HANDLE;
    }

    // poll(2): int poll(struct pollfd *fds, nfds_t nfds, int timeout)
    private static final class poll {
        static final MethodHandle HANDLE = bind("poll",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle poll$handle() {
        return poll.HANDLE;
    }

    // eventfd(2): int eventfd(unsigned int initval, int flags)
    private static final class eventfd {
        static final MethodHandle HANDLE = bind("eventfd",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle eventfd$handle() {
        return eventfd.HANDLE;
    }

    public static final int EFD_CLOEXEC = 0x80000;
    public static final int EFD_NONBLOCK = 0x800;

    // write(2): ssize_t write(int fd, const void *buf, size_t count)
    private static final class write {
        static final MethodHandle HANDLE = bind("write",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    }

    public static MethodHandle write$handle() {
        return write.HANDLE;
    }

    // close(2): int close(int fd)
    private static final class close {
        static final MethodHandle HANDLE = bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    public static MethodHandle close$handle() {
        return close.HANDLE;
    }

    // open(2): int open(const char *pathname, int flags, mode_t mode)
    private static final class open {
        static final MethodHandle HANDLE = bind("open",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle open$handle() {
        return open.HANDLE;
    }

    public static final int O_WRONLY = 01;
    public static final int O_CREAT = 0100;
    public static final int O_APPEND = 02000;
    public static final int O_NONBLOCK = 04000;
    public static final int O_CLOEXEC = 02000000;
    /** Differs by architecture (asm-generic vs x86): arm64 040000 is O_DIRECTORY there, 0100000 O_NOFOLLOW. */
    public static final int O_NOFOLLOW = "aarch64".equals(System.getProperty("os.arch")) ? 0100000 : 0400000;
    private static final int ELOOP = 40;

    // process_vm_readv(2): ssize_t process_vm_readv(pid_t pid, const struct iovec *local_iov, unsigned long liovcnt,
    //                                           const struct iovec *remote_iov, unsigned long riovcnt,
    //                                           unsigned long flags)
    private static final class process_vm_readv {
        static final MethodHandle HANDLE = bind("process_vm_readv",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG));
    }

    public static MethodHandle process_vm_readv$handle() {
        return process_vm_readv.HANDLE;
    }

    /** struct iovec { void *iov_base; size_t iov_len; }: 16 bytes on the 64-bit targets infertop builds for. */
    public static final long IOVEC_BYTES = 16;

    // geteuid(2): uid_t geteuid(void)
    private static final class geteuid {
        static final MethodHandle HANDLE = bind("geteuid", FunctionDescriptor.of(JAVA_INT));
    }

    public static MethodHandle geteuid$handle() {
        return geteuid.HANDLE;
    }

    // mkfifo(3): int mkfifo(const char *pathname, mode_t mode)
    private static final class mkfifo {
        static final MethodHandle HANDLE = bind("mkfifo",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle mkfifo$handle() {
        return mkfifo.HANDLE;
    }

    // getpagesize(2): int getpagesize(void)
    private static final class getpagesize {
        static final MethodHandle HANDLE = bind("getpagesize", FunctionDescriptor.of(JAVA_INT));
    }

    public static MethodHandle getpagesize$handle() {
        return getpagesize.HANDLE;
    }

    // strerror(3): char *strerror(int errnum)
    private static final class strerror {
        static final MethodHandle HANDLE = bind("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    public static MethodHandle strerror$handle() {
        return strerror.HANDLE;
    }

    // setpriority(2): int setpriority(int which, id_t who, int prio); on Linux PRIO_PROCESS with a thread id
    // sets that thread's nice value only.
    private static final class setpriority {
        static final MethodHandle HANDLE = bind("setpriority",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle setpriority$handle() {
        return setpriority.HANDLE;
    }

    public static final int PRIO_PROCESS = 0;

    // signal(2): sighandler_t signal(int signum, sighandler_t handler); SIG_DFL is the address 0, SIG_IGN 1.
    private static final class signal {
        static final MethodHandle HANDLE = bind("signal", FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
    }

    public static MethodHandle signal$handle() {
        return signal.HANDLE;
    }

    public static final int SIGINT = 2;

    // clock_gettime(2): int clock_gettime(clockid_t clockid, struct timespec *tp); struct timespec is two longs
    // on both 64-bit ABIs infertop builds for.
    private static final class clock_gettime {
        static final MethodHandle HANDLE = bind("clock_gettime", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }

    public static MethodHandle clock_gettime$handle() {
        return clock_gettime.HANDLE;
    }

    /** This process's CPU clock: all its threads, in nanoseconds. */
    public static final int CLOCK_PROCESS_CPUTIME_ID = 2;

    /**
     * Another process's CPU clock (what glibc's clock_getcpuclockid(3) returns: the pid complemented, shifted
     * past the clock kind, CPUCLOCK_SCHED = 2, the per-thread bit clear). The kernel lets anyone read it.
     */
    public static int processCpuClock(int pid) {
        return (~pid << 3) | 2;
    }

    /** The clock's time in nanoseconds, or -1 when the kernel refuses it (a process that is gone). */
    public static long clockNs(int clockId) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment timespec = arena.allocate(16, 8);
            int rc = (int) clock_gettime.HANDLE.invokeExact(clockId, timespec);
            return rc != 0 ? -1 : timespec.get(JAVA_LONG, 0) * 1_000_000_000L + timespec.get(JAVA_LONG, 8);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // malloc_trim(3) (glibc): int malloc_trim(size_t pad). Absent from other C libraries: then nothing is trimmed.
    private static final class malloc_trim {
        static final MethodHandle HANDLE = LINKER.defaultLookup().find("malloc_trim")
                .map(symbol -> LINKER.downcallHandle(symbol, FunctionDescriptor.of(JAVA_INT, JAVA_LONG))).orElse(null);
    }

    /**
     * Gives memory that native code freed back to the system: glibc keeps freed pages of its arenas resident
     * (libbpf's parse of the kernel's BTF, megabytes, stays in infertop's RSS after the load frees it).
     */
    public static void trimNativeHeap() {
        MethodHandle trim = malloc_trim.HANDLE;
        if (trim == null) {
            return;
        }
        try {
            int released = (int) trim.invokeExact(0L);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static int geteuid() {
        try {
            return (int) geteuid.HANDLE.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static int pageSize() {
        try {
            return (int) getpagesize.HANDLE.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) strerror.HANDLE.invokeExact(errno);
            // SAFETY: strerror returns a NUL-terminated static string; 256 bytes covers every glibc message.
            return text.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** Creates a FIFO (named pipe) at {@code path}; throws with errno's message on failure. */
    public static void mkfifo(String path, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int rc = (int) mkfifo.HANDLE.invokeExact(state, arena.allocateFrom(path), mode);
            if (rc != 0) {
                throw new IllegalStateException("cannot create FIFO " + path + ": " + strerror(Errno.read(state)));
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static final int O_RDONLY = 0;
    /** Same value on x86_64 and arm64: an fd that names a file without opening it (no driver open, no FIFO wait). */
    public static final int O_PATH = 010000000;
    public static final int O_NOCTTY = 0400;

    /**
     * open(2) with {@code O_PATH | O_CLOEXEC} (and {@code O_NOFOLLOW} unless {@code followLinks}): a descriptor
     * that names the file without opening it, so neither a device's open routine nor a FIFO's wait for a writer
     * runs, and a terminal cannot become the controlling one. The caller looks at it ({@link #statx}) before
     * opening it for reading through /proc/self/fd. With {@code O_NOFOLLOW} a symbolic link gives a descriptor of
     * the link itself, which statx reports as one.
     */
    public static int openPathOnly(String path, boolean followLinks) throws java.io.IOException {
        int noFollow = followLinks ? 0 : O_NOFOLLOW;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int fd = (int) open.HANDLE.invokeExact(state, arena.allocateFrom(path), O_PATH | O_CLOEXEC | noFollow, 0);
            if (fd < 0) {
                int errno = Errno.read(state);
                throw switch (errno) {
                    case Errno.ENOENT -> new java.nio.file.NoSuchFileException(path);
                    case Errno.EACCES, Errno.EPERM -> new java.nio.file.AccessDeniedException(path);
                    default -> new java.io.IOException(path + ": " + strerror(errno));
                };
            }
            return fd;
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // statx(2): int statx(int dirfd, const char *pathname, int flags, unsigned int mask, struct statx *statxbuf)
    private static final class statx {
        static final MethodHandle HANDLE = bind("statx",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), Errno.CAPTURE);
    }

    public static MethodHandle statx$handle() {
        return statx.HANDLE;
    }

    public static final int AT_EMPTY_PATH = 0x1000;
    /** Cached attributes on a network or FUSE file system: no round trip to a server the target may run. */
    private static final int AT_STATX_DONT_SYNC = 0x4000;
    public static final int STATX_BASIC_STATS = 0x7ff;
    /**
     * struct statx is the same on every architecture (linux/stat.h): 256 bytes; uid at 20, mode (u16) at 28, ino
     * at 32, size at 40, dev_major/dev_minor at 136/140.
     */
    public static final long STATX_BYTES = 256;

    /** What {@link #statx} reports of a descriptor: st_mode, st_size, st_dev (glibc's makedev) and st_ino. */
    public record FileStatus(int mode, long sizeBytes, long device, long inode) {}

    /** statx(2) of the file {@code fd} names (an O_PATH descriptor too), never of a path. */
    public static FileStatus statx(int fd) throws java.io.IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment buffer = arena.allocate(STATX_BYTES, 8);
            int rc = (int) statx.HANDLE.invokeExact(state, fd, arena.allocateFrom(""),
                    AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, buffer);
            if (rc != 0) {
                throw new java.io.IOException("statx: " + strerror(Errno.read(state)));
            }
            // SAFETY: statx filled the 256-byte struct statx; offsets from linux/stat.h (stx_mode 28, stx_ino 32,
            // stx_size 40, stx_dev_major 136, stx_dev_minor 140).
            int mode = Short.toUnsignedInt(buffer.get(JAVA_SHORT, 28));
            long inode = buffer.get(JAVA_LONG, 32);
            long size = buffer.get(JAVA_LONG, 40);
            long major = Integer.toUnsignedLong(buffer.get(JAVA_INT, 136));
            long minor = Integer.toUnsignedLong(buffer.get(JAVA_INT, 140));
            long device = ((major & 0xfffL) << 8) | ((major & ~0xfffL) << 32) | (minor & 0xffL) | ((minor & ~0xffL) << 12);
            return new FileStatus(mode, size, device, inode);
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Opens {@code path} read-only without blocking: a FIFO (or a device) put where a file was expected opens
     * at once instead of waiting for a writer, so the caller can look at what it got (see RegularFile).
     */
    public static int openNonBlocking(String path, boolean followLinks) throws java.io.IOException {
        int noFollow = followLinks ? 0 : O_NOFOLLOW;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int fd = (int) open.HANDLE.invokeExact(state, arena.allocateFrom(path), O_RDONLY | O_NONBLOCK | O_CLOEXEC | noFollow, 0);
            if (fd < 0) {
                int errno = Errno.read(state);
                throw switch (errno) {
                    case Errno.ENOENT -> new java.nio.file.NoSuchFileException(path);
                    case Errno.EACCES, Errno.EPERM -> new java.nio.file.AccessDeniedException(path);
                    case ELOOP -> new java.nio.file.FileSystemException(path, null, "not a regular file (a symbolic link)");
                    default -> new java.io.IOException(path + ": " + strerror(errno));
                };
            }
            return fd;
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * open(2) with {@code O_NOFOLLOW | O_CLOEXEC} added: the fd, or an IOException with one line (a link at
     * {@code path} says so).
     */
    public static int openNoFollow(String path, int flags, int mode) throws java.io.IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            int fd = (int) open.HANDLE.invokeExact(state, arena.allocateFrom(path), flags | O_NOFOLLOW | O_CLOEXEC, mode);
            if (fd < 0) {
                int errno = Errno.read(state);
                throw new java.io.IOException(errno == ELOOP
                        ? path + " is a symbolic link: infertop does not write through links (it runs as root);"
                                + " remove it or choose another name"
                        : "cannot open " + path + ": " + strerror(errno));
            }
            return fd;
        } catch (java.io.IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // The *at calls a directory fd is written through (see OpenDirectory): nothing below resolves a name from
    // anywhere but a directory infertop opened itself.

    public static final int AT_FDCWD = -100;
    public static final int AT_SYMLINK_NOFOLLOW = 0x100;
    public static final int AT_REMOVEDIR = 0x200;
    public static final int O_EXCL = 0200;
    /** Differs by architecture like O_NOFOLLOW: asm-generic 040000, x86 0200000. */
    public static final int O_DIRECTORY = "aarch64".equals(System.getProperty("os.arch")) ? 040000 : 0200000;
    public static final int RENAME_NOREPLACE = 1;
    public static final int RENAME_EXCHANGE = 2;
    /** openat2(2)'s number, the same on x86_64 and arm64 (numbers from 403 on are shared by every architecture). */
    public static final long SYS_OPENAT2 = 437;
    public static final long RESOLVE_NO_MAGICLINKS = 0x02;
    public static final long RESOLVE_NO_SYMLINKS = 0x04;

    // syscall(2): long syscall(long number, ...); here openat2(int dirfd, const char *path, struct open_how *how,
    // size_t size), which glibc does not wrap
    private static final class syscall_openat2 {
        static final MethodHandle HANDLE = bind("syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG),
                Linker.Option.firstVariadicArg(1), Errno.CAPTURE);
    }

    public static MethodHandle openat2$handle() {
        return syscall_openat2.HANDLE;
    }

    // openat(2): int openat(int dirfd, const char *pathname, int flags, mode_t mode)
    private static final class openat {
        static final MethodHandle HANDLE = bind("openat",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle openat$handle() {
        return openat.HANDLE;
    }

    // mkdirat(2): int mkdirat(int dirfd, const char *pathname, mode_t mode)
    private static final class mkdirat {
        static final MethodHandle HANDLE = bind("mkdirat",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle mkdirat$handle() {
        return mkdirat.HANDLE;
    }

    // unlinkat(2): int unlinkat(int dirfd, const char *pathname, int flags)
    private static final class unlinkat {
        static final MethodHandle HANDLE = bind("unlinkat",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle unlinkat$handle() {
        return unlinkat.HANDLE;
    }

    // renameat2(2): int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
    // unsigned int flags)
    private static final class renameat2 {
        static final MethodHandle HANDLE = bind("renameat2",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle renameat2$handle() {
        return renameat2.HANDLE;
    }

    // fchmod(2): int fchmod(int fd, mode_t mode)
    private static final class fchmod {
        static final MethodHandle HANDLE = bind("fchmod",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle fchmod$handle() {
        return fchmod.HANDLE;
    }

    // write(2) with errno: ssize_t write(int fd, const void *buf, size_t count)
    private static final class write_errno {
        static final MethodHandle HANDLE = bind("write",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), Errno.CAPTURE);
    }

    public static MethodHandle writeWithErrno$handle() {
        return write_errno.HANDLE;
    }

    // fdopendir(3): DIR *fdopendir(int fd) (the DIR owns the fd from then on)
    private static final class fdopendir {
        static final MethodHandle HANDLE = bind("fdopendir", FunctionDescriptor.of(ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle fdopendir$handle() {
        return fdopendir.HANDLE;
    }

    // readdir(3): struct dirent *readdir(DIR *dirp); glibc's 64-bit struct dirent: d_ino (8), d_off (8),
    // d_reclen (2), d_type (1), then d_name at 19, NUL-terminated, at most 256 bytes.
    private static final class readdir {
        static final MethodHandle HANDLE = bind("readdir", FunctionDescriptor.of(ADDRESS, ADDRESS));
    }

    public static MethodHandle readdir$handle() {
        return readdir.HANDLE;
    }

    public static final long DIRENT_NAME_OFFSET = 19;

    // closedir(3): int closedir(DIR *dirp)
    private static final class closedir {
        static final MethodHandle HANDLE = bind("closedir", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle closedir$handle() {
        return closedir.HANDLE;
    }

    /** close(2), ignoring failure (nothing to do about it). */
    public static void closeQuietly(int fd) {
        try {
            int ignored = (int) close.HANDLE.invokeExact(fd);
        } catch (Throwable ignored) {
            // close(2) has no failure worth reporting here
        }
    }
}
