package dev.infertop.process.layout;

import dev.infertop.process.ElfFile;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Calibrations cached by build-id: read back equal, used instead of loading, dropped when the file changes. */
class LayoutCacheTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    @Test
    void aCachedLayoutIsReadBackEqualAndUsedInsteadOfCalibrating() throws Exception {
        Path library = copyOfSourceBuild();
        LayoutCache cache = new LayoutCache(work.resolve("layouts"));
        LayoutCalibrator calibrator = new LayoutCalibrator(cache);

        long coldStart = System.nanoTime();
        CalibratedLayout cold = calibrator.calibrate(library);
        long coldMicros = (System.nanoTime() - coldStart) / 1000;
        Path entry = cache.directory().resolve(cold.buildId() + ".json");
        assertTrue(Files.isRegularFile(entry), "cache entry " + entry);

        long warmStart = System.nanoTime();
        CalibratedLayout warm = calibrator.calibrate(library);
        long warmMicros = (System.nanoTime() - warmStart) / 1000;
        assertEquals(cold, warm);
        System.out.printf("calibration of %s: cold %d µs, from cache %d µs%n", library, coldMicros, warmMicros);

        // Proof the second answer came from the file, not from the library: mark the entry, read the mark.
        markEntry(entry, "from-the-cache");
        assertEquals("from-the-cache", calibrator.calibrate(library).library());
    }

    @Test
    void aChangedFileIsCalibratedAgain() throws Exception {
        Path library = copyOfSourceBuild();
        LayoutCache cache = new LayoutCache(work.resolve("layouts"));
        LayoutCalibrator calibrator = new LayoutCalibrator(cache);
        CalibratedLayout first = calibrator.calibrate(library);
        Path entry = cache.directory().resolve(first.buildId() + ".json");
        markEntry(entry, "from-the-cache");

        // Same build-id, different bytes: appending leaves the ELF (and its build-id note) intact.
        Files.write(library, new byte[] {0}, StandardOpenOption.APPEND);
        CalibratedLayout second = calibrator.calibrate(library);
        assertNotEquals("from-the-cache", second.library());
        assertEquals(first.buildId(), second.buildId());
        assertEquals(first.tensor(), second.tensor());
        assertEquals(Files.size(library), JSON.readTree(entry.toFile()).get("sizeBytes").asLong(), "entry rewritten");
    }

    @Test
    void aFileWithTheSameBuildIdSizeAndMtimeButOtherBytesIsCalibratedAgain() throws Exception {
        // What a hostile copy of a build would look like: its layout must not be served for the real file.
        Path library = copyOfSourceBuild();
        LayoutCache cache = new LayoutCache(work.resolve("layouts"));
        LayoutCalibrator calibrator = new LayoutCalibrator(cache);
        CalibratedLayout first = calibrator.calibrate(library);
        markEntry(cache.directory().resolve(first.buildId() + ".json"), "from-the-cache");

        long comment;
        try (ElfFile elf = ElfFile.open(library)) {
            comment = elf.section(".comment").orElseThrow().fileOffset(); // the compiler's name: harmless to change
        }
        var modified = Files.getLastModifiedTime(library);
        long size = Files.size(library);
        try (var file = java.nio.channels.FileChannel.open(library, StandardOpenOption.WRITE)) {
            file.write(java.nio.ByteBuffer.wrap(new byte[] {'X'}), comment + 1);
        }
        Files.setLastModifiedTime(library, modified);
        assertEquals(size, Files.size(library));

        CalibratedLayout second = calibrator.calibrate(library);
        assertNotEquals("from-the-cache", second.library(), "size and mtime alike, the bytes differ");
        assertEquals(first.tensor(), second.tensor());
    }

    @Test
    void aCorruptEntryIsIgnored() throws Exception {
        Path library = copyOfSourceBuild();
        LayoutCache cache = new LayoutCache(work.resolve("layouts"));
        CalibratedLayout first = new LayoutCalibrator(cache).calibrate(library);
        Files.writeString(cache.directory().resolve(first.buildId() + ".json"), "{ not json");
        assertEquals(first, new LayoutCalibrator(cache).calibrate(library));
    }

    private static void markEntry(Path entry, String library) throws Exception {
        ObjectNode json = (ObjectNode) JSON.readTree(entry.toFile());
        ((ObjectNode) json.get("layout")).put("library", library);
        Files.writeString(entry, JSON.writeValueAsString(json));
    }

    private Path copyOfSourceBuild() throws Exception {
        Path source = LlamaReleases.sourceBuild().require().libggmlBase();
        Path copy = work.resolve("lib").resolve("libggml-base.so");
        Files.createDirectories(copy.getParent());
        Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
        return copy;
    }
}
