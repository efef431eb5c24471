package dev.infertop.process.layout;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The three libggml-base builds the layout tests calibrate: the source build and the prebuilt npm libraries of
 * the current release (src/scripts/provision-llama.sh), and an older prebuilt release with its source
 * (src/scripts/provision-old-llama.sh 3.3.0, llama.cpp b4234), and one from before ggml's backend split
 * whose struct ggml_tensor differs (provision-old-llama.sh 3.2.0, b3995). Absent ones skip a test on a workstation and
 * fail it on CI (env CI=true), where provisioning is part of the job.
 */
record LlamaReleases(String name, Path libggmlBase, Path source) {
    static final Path CACHE = Path.of(System.getProperty("user.home"), ".cache", "infertop");
    static final String OLD_NODE_LLAMA_CPP_VERSION = "3.3.0";
    static final String PRE_SPLIT_NODE_LLAMA_CPP_VERSION = "3.2.0";

    static LlamaReleases sourceBuild() {
        Path root = CACHE.resolve("llama.cpp-node-3.22.1");
        return new LlamaReleases("source build v0.5.0", root.resolve("build/bin/libggml-base.so"), root.resolve("src"));
    }

    static LlamaReleases prebuilt() {
        Path root = CACHE.resolve("llama.cpp-node-3.22.1");
        return new LlamaReleases("prebuilt v0.5.0", root.resolve("prebuilt/libggml-base.so"), root.resolve("src"));
    }

    static LlamaReleases old() {
        Path root = CACHE.resolve("llama.cpp-node-" + OLD_NODE_LLAMA_CPP_VERSION + "-prebuilt");
        return new LlamaReleases("prebuilt b4234", root.resolve("libggml-base.so"), root.resolve("src"));
    }

    /** b3995 (node-llama-cpp 3.2.0), before ggml's backend split: one libggml.so, and a tensor with a grad field. */
    static LlamaReleases preSplit() {
        Path root = CACHE.resolve("llama.cpp-node-" + PRE_SPLIT_NODE_LLAMA_CPP_VERSION + "-prebuilt");
        return new LlamaReleases("prebuilt b3995", root.resolve("libggml.so"), root.resolve("src"));
    }

    /** This release's library and headers, or the test is skipped (workstation) / failed (CI). */
    LlamaReleases require() {
        boolean present = Files.isRegularFile(libggmlBase)
                && Files.isRegularFile(source.resolve("ggml/include/ggml.h"));
        if (!present) {
            String reason = name + " absent (" + libggmlBase + " with headers under " + source + "): run "
                    + "src/scripts/provision-llama.sh and src/scripts/provision-old-llama.sh with "
                    + OLD_NODE_LLAMA_CPP_VERSION + " and " + PRE_SPLIT_NODE_LLAMA_CPP_VERSION;
            TestRequirements.requireOrSkip(false, reason);
        }
        return this;
    }

    @Override
    public String toString() {
        return name;
    }
}
