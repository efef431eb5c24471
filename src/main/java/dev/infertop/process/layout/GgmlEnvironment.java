package dev.infertop.process.layout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Process environment ggml reads while it is loaded into this JVM.
 *
 * <p>GGML_NO_BACKTRACE: newer libggml-base (ggml.cpp) runs a static initializer that installs a process-wide
 * std::terminate handler and GGML_ASSERTs that the current handler is not its own. Loaded, closed (dlclose)
 * and loaded again at the same address — as calibrating several copies in one JVM does — the handler left
 * behind by the first load has the new load's address, the assertion fails and ggml aborts the JVM. The
 * initializer does nothing when GGML_NO_BACKTRACE is set; the same variable stops ggml_abort from attaching
 * gdb to the JVM. Set through libc's setenv (System.getenv is a copy taken at JVM start), once, before the
 * first load, and never overriding a value the user chose.
 */
final class GgmlEnvironment {
    private GgmlEnvironment() {}

    // int setenv(const char *name, const char *value, int overwrite) — setenv(3)
    private static final MethodHandle SETENV = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("setenv").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));

    private static boolean prepared;

    static synchronized void prepareForLoading() {
        if (prepared) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) SETENV.invokeExact(arena.allocateFrom("GGML_NO_BACKTRACE"), arena.allocateFrom("1"), 0);
        } catch (Throwable t) {
            throw new IllegalStateException("setenv(GGML_NO_BACKTRACE) failed", t);
        }
        prepared = true;
    }
}
