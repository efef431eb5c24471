package dev.infertop.process.layout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Root's session keyring with a secret in it, for tests: keyutils' keyctl(1) may be missing, so the calls are
 * made here (syscall(2): add_key(2), keyctl(2) KEYCTL_JOIN_SESSION_KEYRING). A session keyring belongs to the
 * calling thread's credentials: a process the thread starts afterwards inherits it, as infertop's children
 * inherit the one of the shell that started infertop.
 */
public final class Keyrings {
    private Keyrings() {}

    private static final boolean ARM64 = "aarch64".equals(System.getProperty("os.arch"));
    private static final long SYS_ADD_KEY = ARM64 ? 217 : 248;
    private static final long SYS_KEYCTL = ARM64 ? 219 : 250;
    private static final long KEYCTL_JOIN_SESSION_KEYRING = 1;
    private static final long KEY_SPEC_SESSION_KEYRING = -3;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SYSCALL_2 = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS),
            Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));
    private static final MethodHandle SYSCALL_5 = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG),
            Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));

    /**
     * Makes the calling thread join a new session keyring named {@code keyring} and adds a "user" key
     * {@code description} holding {@code secret} to it (default permissions: its possessor may read it);
     * the key's serial.
     */
    public static long plantInNewSession(String keyring, String description, String secret) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            long session = (long) SYSCALL_2.invokeExact(state, SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING,
                    arena.allocateFrom(keyring));
            if (session < 0) {
                throw new IllegalStateException("keyctl JOIN_SESSION_KEYRING failed, errno " + errno(state));
            }
            byte[] payload = secret.getBytes(StandardCharsets.UTF_8);
            MemorySegment bytes = arena.allocate(payload.length);
            bytes.copyFrom(MemorySegment.ofArray(payload));
            long key = (long) SYSCALL_5.invokeExact(state, SYS_ADD_KEY, arena.allocateFrom("user"),
                    arena.allocateFrom(description), bytes, (long) payload.length, KEY_SPEC_SESSION_KEYRING);
            if (key < 0) {
                throw new IllegalStateException("add_key failed, errno " + errno(state));
            }
            return key;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static int errno(MemorySegment state) {
        return state.get(JAVA_INT, Linker.Option.captureStateLayout().byteOffset(
                java.lang.foreign.MemoryLayout.PathElement.groupElement("errno")));
    }
}
