package dev.infertop.ffi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A process descriptor (pidfd_open(2), Linux 5.3): a signal sent through it reaches the process it was opened
 * for, never one that has its pid later. glibc 2.36 wraps both calls; older ones do not, so through syscall(2).
 */
public final class Pidfd implements AutoCloseable {
    /** The same numbers on x86_64 and arm64 (from 424 on they are shared by every architecture). */
    private static final long SYS_PIDFD_SEND_SIGNAL = 424;
    private static final long SYS_PIDFD_OPEN = 434;
    public static final int SIGCONT = 18;
    public static final int SIGKILL = 9;

    // syscall(2): long syscall(long number, ...); here pidfd_open(pid_t pid, unsigned int flags)
    private static final class pidfd_open {
        static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("syscall").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT),
                Linker.Option.firstVariadicArg(1), Errno.CAPTURE);
    }

    // syscall(2); here pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned int flags)
    private static final class pidfd_send_signal {
        static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("syscall").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT),
                Linker.Option.firstVariadicArg(1), Errno.CAPTURE);
    }

    private final int pid;
    private int fd;

    private Pidfd(int pid, int fd) {
        this.pid = pid;
        this.fd = fd;
    }

    /** A descriptor of process {@code pid} (a thread group leader) as it is now. */
    public static Pidfd open(int pid) throws IOException {
        long fd;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            fd = (long) pidfd_open.HANDLE.invokeExact(errno, SYS_PIDFD_OPEN, pid, 0);
            err = Errno.read(errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (fd < 0) {
            throw new IOException("pidfd_open " + pid + ": " + LibC.strerror(err));
        }
        return new Pidfd(pid, (int) fd);
    }

    public int pid() {
        return pid;
    }

    /** Sends {@code signal}; false when the process has exited meanwhile (ESRCH) or the descriptor is closed. */
    public synchronized boolean signal(int signal) {
        if (fd < 0) {
            return false;
        }
        long rc;
        try (Arena arena = Arena.ofConfined()) {
            rc = (long) pidfd_send_signal.HANDLE.invokeExact(Errno.allocate(arena), SYS_PIDFD_SEND_SIGNAL, fd, signal,
                    MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return rc == 0;
    }

    private final PollFd pollFd = new PollFd();

    /**
     * Whether the process has exited (its descriptor polls readable then): one poll(2), where asking /proc by pid
     * opens and parses a file, and could find another process that has the pid since.
     */
    public synchronized boolean exited() {
        if (fd < 0) {
            return true;
        }
        return (pollFd.pendingNow(fd, PollFd.POLLIN) & PollFd.POLLIN) != 0;
    }

    @Override
    public synchronized void close() {
        if (fd >= 0) {
            LibC.closeQuietly(fd);
            fd = -1;
        }
    }
}
