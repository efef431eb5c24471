package dev.infertop.it;

import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.SyntheticModel;
import dev.infertop.workload.gguf.ProgressListener;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** Synthetic models for the integration tests, generated once into the cache and reused. */
final class Models {
    private Models() {}

    static Path preset(String name) {
        try {
            return SyntheticModel.preset(name).writeToCache(LlamaCppWorkload.cacheDir().resolve("models"),
                    ProgressListener.NONE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
