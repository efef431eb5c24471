package dev.infertop.machine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CeilingCacheTest {
    @TempDir
    Path dir;

    @Test
    void whatIsStoredIsReadBackAndAnythingOffIsNone() throws Exception {
        CeilingCache cache = new CeilingCache(dir);
        MachineCeilings ceilings = new MachineCeilings(MachineCeilings.FORMAT_VERSION, "2026-11-25T14:17:59Z",
                "AMD EPYC", 2, 268435456L, 1.6302117777750044E10, 1.38e10, 1.70e10, "every cache line",
                4.29e10, 3.94e10, 6.82e10, "f32 FMA loop");
        cache.store(ceilings);
        assertEquals(Optional.of(ceilings), cache.lookup(2));
        assertEquals(Optional.empty(), cache.lookup(3));

        String kernel = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
        UprobeHitCost cost = new UprobeHitCost(UprobeHitCost.FORMAT_VERSION, "2026-11-25T16:35:30Z", kernel,
                1801.5, 1801.5, 2793.4, 7, 50000, "perf uprobe on a call instruction");
        cache.store(cost);
        assertEquals(Optional.of(cost), cache.uprobeCost());

        Files.writeString(cache.fileFor(2), "{\"formatVersion\": 1, \"threads\": \"two\"}");
        assertEquals(Optional.empty(), cache.lookup(2), "a corrupt record is none");
        Files.writeString(cache.uprobeCostFile(), "x".repeat(70 * 1024));
        assertEquals(Optional.empty(), cache.uprobeCost(), "an oversized one too");
        cache.store(new UprobeHitCost(UprobeHitCost.FORMAT_VERSION, "t", kernel + "-other", 1801.5, 1801.5,
                2793.4, 7, 50000, "m"));
        assertEquals(Optional.empty(), cache.uprobeCost(), "another kernel's cost is none");
    }
}
