package dev.infertop.workload;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the provisioned llama.cpp build for tests that run it: {@code $INFERTOP_LLAMA_DIR}, else
 * {@code ~/.cache/infertop/llama.cpp-node-3.22.1}. Missing binaries skip the test on a workstation but fail it
 * on CI (env CI=true), where provisioning is part of the job and skipping would hide a broken setup.
 */
final class LlamaCppBinaries {

    static final String DIR_ENV = "INFERTOP_LLAMA_DIR";
    static final String DEFAULT_DIR_NAME = "llama.cpp-node-3.22.1";

    private LlamaCppBinaries() {
    }

    static Path llamaDir() {
        String configured = System.getenv(DIR_ENV);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "infertop", DEFAULT_DIR_NAME);
    }

    /** The executable, or the test is skipped (workstation) / failed (CI) with the reason. */
    static Path require(String tool) {
        Path binary = llamaDir().resolve("build").resolve("bin").resolve(tool);
        if (!Files.isExecutable(binary)) {
            String reason = tool + " not found at " + binary + " (set " + DIR_ENV
                    + " to the llama.cpp-node-3.22.1 directory, or run src/scripts/provision-llama.sh)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(reason);
            }
            Assumptions.abort(reason);
        }
        return binary;
    }
}
