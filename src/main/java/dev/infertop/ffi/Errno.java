package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * errno as the FFM linker captures it right after a native call (errno itself is thread-local state the
 * JVM may clobber before Java could read it). Handles bound with {@link #CAPTURE} take a capture segment
 * from {@link #allocate(Arena)} as their first argument.
 */
public final class Errno {
    private Errno() {}

    public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");
    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    public static MemorySegment allocate(Arena arena) {
        return arena.allocate(STATE);
    }

    public static int read(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EBADF = 9;
    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int EACCES = 13;
    public static final int EEXIST = 17;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int ENOTEMPTY = 39;
    public static final int ELOOP = 40;
    public static final int EOPNOTSUPP = 95;
    public static final int EINVAL = 22;
}
