package dev.infertop.workload;

import dev.infertop.ffi.OwnPriority;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * The real llama.cpp infertop is demoed and tested on: node-llama-cpp's bundled source release built once
 * into the cache, plus its prebuilt libraries. Provisioned by src/scripts/provision-llama.sh (shipped in the
 * jar), which only uses the npm registry and the local toolchain.
 */
public final class LlamaCppWorkload {
    public static final String NODE_LLAMA_CPP_VERSION = "3.22.1";

    private final Path root;

    private LlamaCppWorkload(Path root) {
        this.root = root;
    }

    /** $INFERTOP_CACHE, else ~/.cache/infertop. */
    public static Path cacheDir() {
        String override = System.getenv("INFERTOP_CACHE");
        return override != null && !override.isBlank() ? Path.of(override)
                : Path.of(System.getProperty("user.home"), ".cache", "infertop");
    }

    public static Path defaultRoot() {
        String override = System.getenv("INFERTOP_LLAMA_DIR");
        return override != null && !override.isBlank() ? Path.of(override)
                : cacheDir().resolve("llama.cpp-node-" + NODE_LLAMA_CPP_VERSION);
    }

    /** The workload if it is already provisioned, else null. */
    public static LlamaCppWorkload findProvisioned() {
        Path root = defaultRoot();
        boolean ready = Files.exists(root.resolve("build.stamp")) && Files.exists(root.resolve("prebuilt.stamp"));
        return ready ? new LlamaCppWorkload(root) : null;
    }

    /** The provisioned workload, provisioning it first (minutes; progress on {@code progress}) if needed. */
    public static LlamaCppWorkload ensure(PrintStream progress) throws IOException {
        LlamaCppWorkload ready = findProvisioned();
        if (ready != null) {
            return ready;
        }
        progress.println("infertop: the llama.cpp workload is not provisioned yet: building it once into "
                + defaultRoot() + " (about 5 minutes)");
        Path script = Files.createTempFile("infertop-provision-", ".sh");
        try (InputStream in = LlamaCppWorkload.class.getResourceAsStream("provision-llama.sh")) {
            if (in == null) {
                throw new IOException("this infertop build lacks provision-llama.sh");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
            ProcessBuilder builder = new ProcessBuilder("bash", script.toString(), cacheDir().toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT);
            builder.environment().put("INFERTOP_NODE_LLAMA_CPP_VERSION", NODE_LLAMA_CPP_VERSION);
            Process process = OwnPriority.start(builder);
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = process.waitFor();
            if (status != 0) {
                throw new IOException("provisioning llama.cpp failed (exit " + status + "); see the messages above");
            }
            List<String> lines = output.lines().toList();
            if (lines.isEmpty()) {
                throw new IOException("provisioning llama.cpp printed no workload directory");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while provisioning llama.cpp");
        } finally {
            Files.deleteIfExists(script);
        }
        LlamaCppWorkload provisioned = findProvisioned();
        if (provisioned == null) {
            throw new IOException("provisioning llama.cpp finished but " + defaultRoot() + " is incomplete");
        }
        return provisioned;
    }

    public Path root() {
        return root;
    }

    /** A tool from the source build: llama-bench, llama-server, llama-completion, llama-eval-callback. */
    public Path sourceBuildTool(String name) {
        return root.resolve("build/bin").resolve(name);
    }

    /** Directory of the prebuilt npm libraries, with llama-bench and llama-completion copied beside them. */
    public Path prebuiltDir() {
        return root.resolve("prebuilt");
    }

    /** The environment that makes the copied tools in {@link #prebuiltDir()} run on the prebuilt libraries. */
    public Map<String, String> prebuiltEnvironment() {
        return Map.of("LD_LIBRARY_PATH", prebuiltDir().toString());
    }

    /** The llama.cpp release tag the build came from, e.g. v0.5.0 (from llama.cpp.info.json). */
    public String releaseTag() {
        try {
            String info = Files.readString(root.resolve("llama.cpp.info.json"));
            var matcher = java.util.regex.Pattern.compile("\"tag\"\\s*:\\s*\"([^\"]+)\"").matcher(info);
            return matcher.find() ? matcher.group(1) : "unknown";
        } catch (IOException e) {
            return "unknown";
        }
    }
}
