package dev.infertop.process;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A helper program of native/tools built into the jar for each architecture (src/scripts/compile-bpf.sh), as the
 * resource {@code ARCH/NAME} beside the class that runs it, written out to be executed.
 */
public final class NativeTool {
    private NativeTool() {}

    /** Writes {@code name} for this machine into {@code directory} (root's alone), mode 0700; its path. */
    public static Path extract(Class<?> owner, String name, Path directory) throws IOException {
        String arch = switch (System.getProperty("os.arch")) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "arm64";
            default -> throw new IOException("no " + name + " for " + System.getProperty("os.arch"));
        };
        String resource = arch + "/" + name;
        Path program = directory.resolve(name);
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("this build of infertop has no " + resource + " (it is built for the build"
                        + " machine's architecture only)");
            }
            Files.copy(in, program, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwx------"));
        return program;
    }
}
