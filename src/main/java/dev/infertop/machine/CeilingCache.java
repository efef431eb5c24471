package dev.infertop.machine;

import dev.infertop.workload.LlamaCppWorkload;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.infertop.io.RecordJson;
import dev.infertop.io.CacheFiles;
import dev.infertop.io.OutputFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The ceilings on disk, one file per thread count: {@code $INFERTOP_CACHE/machine/ceilings-t<N>.json} (else
 * {@code ~/.cache/infertop/…}). Measured once per machine; the live view and reports read it, and never measure
 * (that would load the machine the target runs on).
 */
public final class CeilingCache {
    /** Writing only: reads go through RecordJson (Jackson's first use is dear at start; see there). */
    private static final class Writer {
        static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    private static final int MAX_BYTES = 64 * 1024;

    private final Path directory;

    public CeilingCache(Path directory) {
        this.directory = directory;
    }

    public static CeilingCache defaultLocation() {
        return new CeilingCache(LlamaCppWorkload.cacheDir().resolve("machine"));
    }

    public Path fileFor(int threads) {
        return directory.resolve("ceilings-t" + threads + ".json");
    }

    /** The cached ceilings for {@code threads}, if a plausible record is there. */
    public Optional<MachineCeilings> lookup(int threads) {
        Path file = fileFor(threads);
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.empty();
            }
            MachineCeilings ceilings = CeilingMeasurement.checked(
                    RecordJson.read(CacheFiles.readAtMost(file, MAX_BYTES), MachineCeilings.class));
            return ceilings.threads() == threads ? Optional.of(ceilings) : Optional.empty();
        } catch (IOException | RecordJson.Malformed | RuntimeException e) {
            return Optional.empty(); // corrupt or foreign: as good as none
        }
    }

    /**
     * The ceilings to hold a run against: those measured with every online CPU (what {@code infertop machine}
     * measures by default), else those with the most threads, else none.
     */
    public Optional<MachineCeilings> best() {
        Optional<MachineCeilings> all = lookup(Runtime.getRuntime().availableProcessors());
        if (all.isPresent()) {
            return all;
        }
        Optional<MachineCeilings> best = Optional.empty();
        for (int threads = 1; threads <= 256; threads++) {
            Optional<MachineCeilings> found = Files.isRegularFile(fileFor(threads)) ? lookup(threads) : Optional.empty();
            if (found.isPresent()) {
                best = found;
            }
        }
        return best;
    }

    public void store(MachineCeilings ceilings) throws IOException {
        Files.createDirectories(directory);
        OutputFiles.replace(fileFor(ceilings.threads()), out -> Writer.JSON.writeValue(out, ceilings));
    }

    public Path uprobeCostFile() {
        return directory.resolve("uprobe-hit.json");
    }

    /** The cached cost of a uprobe hit, if one was measured under the running kernel. */
    public Optional<UprobeHitCost> uprobeCost() {
        Path file = uprobeCostFile();
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.empty();
            }
            UprobeHitCost cost = RecordJson.read(CacheFiles.readAtMost(file, MAX_BYTES), UprobeHitCost.class);
            String kernel = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
            return cost.plausible() && cost.kernel().equals(kernel) ? Optional.of(cost) : Optional.empty();
        } catch (IOException | RecordJson.Malformed | RuntimeException e) {
            return Optional.empty(); // corrupt or foreign: as good as none
        }
    }

    public void store(UprobeHitCost cost) throws IOException {
        Files.createDirectories(directory);
        OutputFiles.replace(uprobeCostFile(), out -> Writer.JSON.writeValue(out, cost));
    }

    /** The cached cost of a uprobe hit, else measured now (under a second) and cached; empty where it cannot be. */
    public Optional<UprobeHitCost> uprobeCostMeasuredIfMissing(java.util.function.Consumer<String> log) {
        Optional<UprobeHitCost> cached = uprobeCost();
        if (cached.isPresent()) {
            return cached;
        }
        try {
            UprobeHitCost measured = UprobeCostProbe.measure();
            try {
                store(measured);
            } catch (IOException e) {
                log.accept("cannot cache the uprobe hit cost in " + uprobeCostFile() + ": " + e.getMessage());
            }
            return Optional.of(measured);
        } catch (IOException | RuntimeException e) {
            log.accept("cannot measure what a uprobe hit costs here: " + e.getMessage());
            return Optional.empty();
        }
    }
}
