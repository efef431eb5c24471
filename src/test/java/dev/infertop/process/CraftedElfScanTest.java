package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A crafted stripped library (CraftedStrippedElf): its scan ends well within the time limit, and a scan the limit
 * gives up on ends its thread soon after, instead of running on for hours (a linear callee lookup per call over
 * 400,000 functions for 200,000 calls). Too many PT_LOAD segments are refused in one line.
 */
class CraftedElfScanTest {
    private static final int CALLS = 200_000;
    private static final int FILLERS = 400_000;

    @TempDir
    Path dir;

    @Test
    void tooManyLoadSegmentsAreRefusedInOneLine() throws Exception {
        Path file = CraftedStrippedElf.write(dir.resolve("libggml-loads.so"), 65_000, 16, 16);
        TargetException refused = assertThrows(TargetException.class, () -> ElfFile.open(file).close());
        assertEquals("corrupt ELF file " + file + ": 65000 PT_LOAD segments (at most " + ElfFile.MAX_LOAD_SEGMENTS
                + " read)", refused.getMessage());
    }

    @Test
    void aHugeStrippedLibraryIsScannedWithinTheLimit() throws Exception {
        Path file = CraftedStrippedElf.write(dir.resolve("libggml-stripped.so"), 1, CALLS, FILLERS);
        // Generous for a loaded machine: the indexed scan takes seconds; the linear one took hours.
        Optional<ElfSymbol> loop = ScanTimeLimit.run(file.toString(), 120_000, () -> {
            try (ElfFile elf = ElfFile.open(file)) {
                assertEquals(FILLERS + 1, elf.functions().size());
                return StrippedFunctions.recover(elf, StrippedFunctions.NODE_LOOP);
            }
        });
        assertEquals(Optional.empty(), loop, "no callee calls a barrier: no node loop");
    }

    @Test
    void aScanTheLimitGaveUpOnEndsItsThread() throws Exception {
        Path file = CraftedStrippedElf.write(dir.resolve("libggml-stripped.so"), 1, CALLS, FILLERS);
        try (ElfFile elf = ElfFile.open(file)) {
            elf.functionAt(0); // the index built: what is left to give up on is the callee search
            TargetException given = assertThrows(TargetException.class, () -> ScanTimeLimit.run(file.toString(), 1,
                    () -> StrippedFunctions.recover(elf, StrippedFunctions.NODE_LOOP)));
            assertTrue(given.getMessage().contains("given up"), given.getMessage());
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (scanThreads() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(0, scanThreads(), "the scan thread ended after the limit gave up on it");
        }
    }

    private static long scanThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("infertop-scan") && t.isAlive()).count();
    }
}
