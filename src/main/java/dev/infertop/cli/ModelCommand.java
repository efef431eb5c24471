package dev.infertop.cli;

import dev.infertop.session.UserError;
import dev.infertop.workload.SyntheticModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code infertop model PRESET FILE}: writes a synthetic llama-architecture GGUF model (no downloads). */
@Command(name = "model", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Write a synthetic GGUF model llama.cpp can run (deterministic from the seed).",
                "Presets: tiny, tiny-moe (tests), deep (32 layers), bench, bench-moe (~250 M parameters,",
                "benchmarks)."})
final class ModelCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "PRESET", description = "tiny, tiny-moe, deep, bench or bench-moe.")
    String preset;

    @Parameters(index = "1", paramLabel = "FILE", description = "The .gguf file to write (replaced atomically).")
    Path file;

    @Option(names = "--seed", paramLabel = "N", description = "Seed for the weights (default: the preset's).")
    Long seed;

    @Override
    public Integer call() throws IOException {
        SyntheticModel model = ModelCommand.resolve(preset);
        if (seed != null) {
            model = model.withSeed(seed);
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new UserError("cannot write " + file + ": directory " + parent + " does not exist");
        }
        write(model, file);
        return 0;
    }

    static SyntheticModel resolve(String preset) {
        try {
            return SyntheticModel.preset(preset);
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage(), 2);
        }
    }

    /** Writes with a progress line on stderr (models reach hundreds of MiB). */
    static void write(SyntheticModel model, Path file) {
        long startNs = System.nanoTime();
        long[] lastPercent = {-1};
        try {
            model.writeTo(file, (written, total) -> {
                long percent = total == 0 ? 100 : written * 100 / total;
                if (percent != lastPercent[0] && (percent % 5 == 0 || written == total)) {
                    lastPercent[0] = percent;
                    System.err.printf(Locale.ROOT, "\rinfertop: writing %s: %3d%% of %d MiB", file.getFileName(),
                            percent, total >> 20);
                }
            });
        } catch (IOException e) {
            if (lastPercent[0] >= 0) {
                System.err.println(); // end the progress line; a refusal before any progress is one line
            }
            throw new UserError("cannot write " + file + ": " + e.getMessage());
        }
        System.err.printf(Locale.ROOT, "%ninfertop: wrote %s (%,d parameters) in %.1f s%n", file,
                model.parameterCount(), (System.nanoTime() - startNs) / 1e9);
    }
}
