package dev.infertop.process.layout;

import dev.infertop.process.AttachPatience;
import dev.infertop.process.BatchLayout;
import dev.infertop.process.ContentHashCache;
import dev.infertop.process.ElfFile;
import dev.infertop.process.TargetException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Where the target's {@code struct llama_batch} keeps positions, sequence ids and logits flags, found from its
 * own libllama ({@link BatchProbe}, run in the unprivileged calibration child like the ggml layouts) and cached
 * per build. When there is no libllama to ask (llama.cpp linked into the executable, which cannot be loaded
 * as a library) or the child fails, the token layer falls back to llama.h's layout and says why; either way
 * every batch is checked against what its arrays must hold before it is believed (see SequenceTracker).
 */
public final class BatchCalibrator {
    private final LayoutCache cache;
    private final Duration childTimeLimit;

    public BatchCalibrator(LayoutCache cache, Duration childTimeLimit) {
        this.cache = cache;
        this.childTimeLimit = childTimeLimit;
    }

    public static BatchCalibrator withDefaultCache() {
        return new BatchCalibrator(LayoutCache.defaultLocation(), AttachPatience.scaled(CalibrationSandbox.TIME_LIMIT));
    }

    /** The layout and, when it is llama.h's rather than the target's own, one line saying why. */
    public record Result(BatchLayout layout, Optional<String> fallbackReason) {}

    /** Calibrates against the libllama among {@code candidates} (the target's mapped libraries), or falls back. */
    public Result forTarget(List<Path> candidates, OptionalInt targetPid) {
        Optional<Path> libllama = libllamaAmong(candidates);
        if (libllama.isEmpty()) {
            return new Result(BatchLayout.LLAMA_H, Optional.of("no shared libllama exporting llama_batch_init "
                    + "among the target's libraries (llama.cpp linked into the program?)"));
        }
        try {
            return new Result(calibrate(libllama.get(), targetPid), Optional.empty());
        } catch (CalibrationException e) {
            return new Result(BatchLayout.LLAMA_H, Optional.of(e.getMessage()));
        }
    }

    /** What tells libllama from the other libraries a target maps. */
    private static final Set<String> LIBLLAMA_EXPORTS = Set.of("llama_decode", "llama_batch_init");

    /** The first candidate that exports both llama_decode and llama_batch_init. */
    static Optional<Path> libllamaAmong(List<Path> candidates) {
        for (Path candidate : candidates) {
            String name = candidate.getFileName() == null ? "" : candidate.getFileName().toString();
            if (!name.startsWith("libllama")) {
                continue;
            }
            try (ElfFile elf = ElfFile.openHeaders(candidate)) {
                if (elf.exportsFunctions(LIBLLAMA_EXPORTS)) {
                    return Optional.of(candidate);
                }
            } catch (TargetException | RuntimeException e) {
                // not a library we can read: another candidate may be the one
            }
        }
        return Optional.empty();
    }

    /** The layout of {@code libllama} as {@code targetPid} maps it: cached, else from a calibration child. */
    public BatchLayout calibrate(Path libllama, OptionalInt targetPid) throws CalibrationException {
        try (LibraryFile file = LibraryFile.open(libllama, targetPid)) {
            LibraryIdentity identity = LibraryIdentity.of(file, new ContentHashCache(cache.directory(), note -> { }));
            Optional<BatchLayout> cached = cache.lookupBatch(identity);
            if (cached.isPresent()) {
                return cached.get();
            }
            String answer;
            // A target in a root of its own: its loader finds the libraries there. Otherwise the child gets the
            // ones the target maps, as binds of the files opened here.
            boolean otherRoot = targetPid.isPresent() && SandboxHelper.isOtherRoot(targetPid.getAsInt());
            try (ChildLibraries dependencies = otherRoot ? null : ChildLibraries.open(file, targetPid)) {
                answer = CalibrationSandbox.run(file, ChildCredentials.forTarget(targetPid), childTimeLimit,
                        List.of(CalibrationChild.BATCH), dependencies == null ? List.of() : dependencies.binds(),
                        targetPid);
            }
            BatchLayout layout = BatchAnswer.read(answer, libllama);
            try {
                cache.storeBatch(identity, layout);
            } catch (IOException e) {
                System.err.println("infertop: cannot cache the llama_batch layout of " + libllama + " in "
                        + cache.directory() + ": " + e.getMessage());
            }
            return layout;
        }
    }
}
