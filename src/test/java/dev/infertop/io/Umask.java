package dev.infertop.io;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/** The test JVM's umask, set for the length of a test (umask(2) is per process: tests here run one at a time). */
public final class Umask {
    private Umask() {}

    private static final MethodHandle UMASK = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("umask").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /** What a test does under the umask. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body} with the umask {@code mask} (e.g. 0022), then puts the previous one back. */
    public static void with(int mask, Body body) throws Exception {
        int previous = set(mask);
        try {
            body.run();
        } finally {
            set(previous);
        }
    }

    private static int set(int mask) {
        try {
            return (int) UMASK.invokeExact(mask);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** "rwx------": the mode of {@code path} itself (a link is not followed). */
    public static String mode(Path path) throws java.io.IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }
}
