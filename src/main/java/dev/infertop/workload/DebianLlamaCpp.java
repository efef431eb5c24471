package dev.infertop.workload;

import dev.infertop.ffi.OwnPriority;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The demo's llama.cpp by default: Debian sid's own packages (llama.cpp-tools, libllama0, libggml0), prebuilt by
 * the distribution for x86-64 and arm64 alike, unpacked into a root of their own in the cache by
 * src/scripts/provision-distro-llama.sh (shipped in the jar; seconds, where a source build takes minutes) and run
 * from it as a container by src/scripts/container-run.sh (also shipped): own mount and PID namespaces, the host's
 * network, so the demo's clients reach the server on loopback. sid's libc is newer than most hosts': the tools
 * run only inside that root, and infertop traces them from the host by pid.
 */
public final class DebianLlamaCpp {
    /** The packaged service's user (llama.cpp-services' unit: User=_llama-server), added by the provisioning. */
    public static final String SERVICE_USER = "_llama-server";

    private final Path dir;

    private DebianLlamaCpp(Path dir) {
        this.dir = dir;
    }

    /** Where the root and its record live: {@code $INFERTOP_CACHE/llama.cpp-debian-sid}. */
    public static Path defaultDir() {
        return LlamaCppWorkload.cacheDir().resolve("llama.cpp-debian-sid");
    }

    /** The root if it is already unpacked, else empty. */
    public static Optional<DebianLlamaCpp> findProvisioned() {
        Path dir = defaultDir();
        return Files.exists(dir.resolve("root.stamp")) ? Optional.of(new DebianLlamaCpp(dir)) : Optional.empty();
    }

    /** The unpacked root, unpacking it first (about 15 s and 80 MB; progress on {@code progress}) if needed. */
    public static DebianLlamaCpp ensure(PrintStream progress) throws IOException {
        Optional<DebianLlamaCpp> ready = findProvisioned();
        if (ready.isPresent()) {
            return ready.get();
        }
        Path script = Files.createTempFile("infertop-provision-distro-", ".sh");
        try {
            copyResource("provision-distro-llama.sh", script);
            ProcessBuilder builder = new ProcessBuilder("bash", script.toString(), "--root-only",
                    LlamaCppWorkload.cacheDir().toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT);
            Process process = OwnPriority.start(builder);
            process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream()); // the root's path: known here
            int status = process.waitFor();
            if (status != 0) {
                throw new IOException("unpacking Debian's llama.cpp failed (exit " + status + "); see the messages "
                        + "above (or run the demo with --build source)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while unpacking Debian's llama.cpp");
        } finally {
            Files.deleteIfExists(script);
        }
        return findProvisioned().orElseThrow(() -> new IOException(
                "unpacking Debian's llama.cpp finished but " + defaultDir() + " has no root.stamp"));
    }

    /** The root directory the tools run from (/usr/bin/llama-server in it). */
    public Path root() {
        return dir.resolve("root");
    }

    /** A tool's path inside the root: /usr/bin/llama-server, /usr/bin/llama-bench. */
    public static String tool(String name) {
        return "/usr/bin/" + name;
    }

    /** What was unpacked, on one line: "llama.cpp-tools 1:0.7.0+dfsg-2, libllama0 ..." (or "versions unknown"). */
    public String versions() {
        try {
            return String.join(", ", Files.readAllLines(dir.resolve("versions.txt")));
        } catch (IOException e) {
            return "versions unknown";
        }
    }

    /**
     * The service user's "uid:gid" as the root's /etc/passwd names it (the provisioning made it the host's own
     * number), empty when the root has none.
     */
    public Optional<String> serviceUser() {
        try {
            for (String line : Files.readAllLines(root().resolve("etc/passwd"))) {
                String[] fields = line.split(":", -1);
                if (fields.length >= 4 && fields[0].equals(SERVICE_USER)) {
                    return Optional.of(fields[2] + ":" + fields[3]);
                }
            }
        } catch (IOException e) {
            // no passwd in the root: run as root inside it
        }
        return Optional.empty();
    }

    /**
     * The command line that runs {@code command} from the root as a container: as {@code user} ("uid:gid"), the
     * directory {@code models} read-only at /models, with only the environment's usual PATH and HOME and
     * {@code environment} ("NAME=VALUE"). The runner is written beside the root from the jar (so a process listing
     * names a file, and an older copy is replaced by this build's).
     */
    public List<String> containerCommand(String user, Path models, List<String> environment, String... command)
            throws IOException {
        Path runner = dir.resolve("container-run.sh");
        byte[] wanted;
        try (InputStream in = resource("container-run.sh")) {
            wanted = in.readAllBytes();
        }
        if (!Files.isRegularFile(runner, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                || !Arrays.equals(Files.readAllBytes(runner), wanted)) {
            Path fresh = Files.createTempFile(dir, ".container-run-", ".sh");
            Files.write(fresh, wanted);
            Files.move(fresh, runner, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        List<String> argv = new ArrayList<>(List.of("bash", runner.toString(), "--user", user, "--models",
                models.toString()));
        for (String variable : environment) {
            argv.addAll(List.of("--env", variable));
        }
        argv.addAll(List.of(root().toString(), "--"));
        argv.addAll(List.of(command));
        return argv;
    }

    private static InputStream resource(String name) throws IOException {
        InputStream in = DebianLlamaCpp.class.getResourceAsStream(name);
        if (in == null) {
            throw new IOException("this infertop build lacks " + name);
        }
        return in;
    }

    private static void copyResource(String name, Path to) throws IOException {
        try (InputStream in = resource(name)) {
            Files.copy(in, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
