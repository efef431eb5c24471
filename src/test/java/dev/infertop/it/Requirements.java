package dev.infertop.it;

import dev.infertop.ffi.LibC;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the integration tests need: root, BPF, bpftool, the provisioned llama.cpp, the packaged jar.
 * Locally a missing piece skips the test with the reason; in CI (CI=true) it fails: a test that cannot run
 * there is a failure, never a skip.
 */
final class Requirements {
    private Requirements() {}

    static boolean inCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    static void require(boolean condition, String reason) {
        if (condition) {
            return;
        }
        if (inCi()) {
            Assertions.fail("cannot run in CI: " + reason);
        }
        Assumptions.abort(reason);
    }

    static void requireRoot() {
        require(LibC.geteuid() == 0, "needs root to load BPF probes (run the suite as root)");
        require(Files.isReadable(Path.of("/sys/kernel/btf/vmlinux")), "needs kernel BTF (/sys/kernel/btf/vmlinux)");
    }

    static Path bpftool() {
        for (String candidate : new String[] {"/usr/sbin/bpftool", "/usr/bin/bpftool", "/usr/local/sbin/bpftool"}) {
            if (Files.isExecutable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        require(false, "needs bpftool (apt-get install -y bpftool) to check for leaked probes");
        return null;
    }

    static LlamaCppWorkload llamaCpp() {
        LlamaCppWorkload workload = LlamaCppWorkload.findProvisioned();
        require(workload != null, "needs the llama.cpp workload: run src/scripts/provision-llama.sh (or .ci/run)");
        return workload;
    }

    static Path jar() {
        String configured = System.getenv("INFERTOP_JAR");
        Path jar = Path.of(configured != null ? configured : "target/infertop.jar");
        require(Files.isRegularFile(jar), "needs the packaged jar " + jar + " (run mvn verify, not mvn test)");
        return jar;
    }

    /** What every test that loads infertop's probes needs: root with BTF, bpftool for the leak check, the jar. */
    static void canTrace() {
        requireRoot();
        bpftool();
        jar();
    }

    /** {@link #canTrace()} and the provisioned llama.cpp to trace. */
    static LlamaCppWorkload canTraceLlamaCpp() {
        canTrace();
        return llamaCpp();
    }
}
