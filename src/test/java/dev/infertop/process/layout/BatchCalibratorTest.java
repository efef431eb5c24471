package dev.infertop.process.layout;

import dev.infertop.ffi.LibC;
import dev.infertop.process.BatchLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * struct llama_batch's offsets, found by the calibration child from each provisioned libllama's own
 * llama_batch_init, against an independent oracle: the struct as that release's llama.h declares it, laid out
 * by the LP64 rules here. And the classification itself on words a library could return, reordered or wrong.
 */
class BatchCalibratorTest {
    @TempDir
    Path work;

    @Test
    void theChildFindsTheOffsetsEachReleasesLlamaHDeclares() throws Exception {
        TestRequirements.requireOrSkip(LibC.geteuid() == 0, "the calibration child is started as root: run as root");
        BatchCalibrator calibrator = new BatchCalibrator(new LayoutCache(work.resolve("layouts")), Duration.ofSeconds(60));
        for (LlamaReleases release : List.of(LlamaReleases.sourceBuild(), LlamaReleases.prebuilt(), LlamaReleases.old(),
                LlamaReleases.preSplit())) {
            release.require();
            Path directory = release.libggmlBase().getParent();
            List<Path> candidates;
            try (var files = Files.list(directory)) {
                candidates = files.sorted().toList();
            }
            Path libllama = BatchCalibrator.libllamaAmong(candidates).orElseThrow(
                    () -> new AssertionError(release + ": no libllama with llama_batch_init in " + directory));
            long start = System.nanoTime();
            BatchLayout found = calibrator.calibrate(libllama, OptionalInt.empty());
            long childMillis = (System.nanoTime() - start) / 1_000_000;
            BatchLayout declared = declaredIn(release.source().resolve("include/llama.h"));
            System.out.printf("llama_batch of %s (%s): %s in %d ms; llama.h: %s%n", release, libllama.getFileName(),
                    found, childMillis, declared);
            assertEquals(declared, found, release.name());
            assertEquals(found, calibrator.calibrate(libllama, OptionalInt.empty()), "from the cache: " + release);
            assertTrue(Files.isRegularFile(work.resolve("layouts").resolve(
                    LibraryIdentity.of(libllama).key() + ".batch.json")), "cached: " + release);
        }
    }

    @Test
    void aProgramWithoutASharedLibllamaFallsBackToLlamaHsLayoutAndSaysWhy() {
        BatchCalibrator.Result result = new BatchCalibrator(new LayoutCache(work), Duration.ofSeconds(5))
                .forTarget(List.of(Path.of("/bin/sh")), OptionalInt.empty());
        assertEquals(BatchLayout.LLAMA_H, result.layout());
        assertTrue(result.fallbackReason().orElseThrow().contains("no shared libllama"), result.toString());
    }

    private static final long SENTINEL = 0x5afe5afe5afe5afeL;

    /** Words of two llama_batch_init results: tokens (embd 0) and embeddings; pointers are fake addresses. */
    private static long[][] batches(String... fields) {
        long[] tokens = new long[BatchProbe.WORDS];
        long[] embeddings = new long[BatchProbe.WORDS];
        java.util.Arrays.fill(tokens, SENTINEL);
        java.util.Arrays.fill(embeddings, SENTINEL);
        tokens[0] = 0;
        embeddings[0] = 0;
        for (int i = 0; i < fields.length; i++) {
            long address = 0x10000L * (i + 1);
            tokens[i + 1] = fields[i].equals("embd") || fields[i].equals("zero") ? 0 : address;
            embeddings[i + 1] = fields[i].equals("token") || fields[i].equals("zero") ? 0 : address + 0x100000L;
        }
        return new long[][] {tokens, embeddings};
    }

    /** malloc_usable_size of the fake arrays by the field at each address, and a NULL-ended seq_id. */
    private static BatchLayout classify(String... fields) throws CalibrationException {
        long[][] words = batches(fields);
        Map<Long, Long> sizes = new HashMap<>();
        long seqIdArray = 0;
        for (int i = 0; i < fields.length; i++) {
            long address = 0x10000L * (i + 1);
            long bytes = switch (fields[i]) {
                case "logits" -> 1008;
                case "seq_id" -> 8024;
                default -> 4008;
            };
            sizes.put(address, bytes);
            if (fields[i].equals("seq_id")) {
                seqIdArray = address;
            }
        }
        sizes.put(0x777000L, 24L); // one token's ids
        long seqIds = seqIdArray;
        java.lang.foreign.MemorySegment array = java.lang.foreign.Arena.ofAuto().allocate(8L * (BatchProbe.TOKENS + 1));
        for (int t = 0; t < BatchProbe.TOKENS; t++) {
            array.setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, t, 0x777000L);
        }
        return BatchProbe.classify(Path.of("libllama.so"), words[0], words[1],
                address -> sizes.getOrDefault(address, -1L),
                address -> {
                    assertEquals(seqIds, address, "only seq_id is read");
                    return array;
                });
    }

    @Test
    void todaysLayoutIsLlamaHs() throws Exception {
        assertEquals(BatchLayout.LLAMA_H, classify("token", "embd", "pos", "n_seq_id", "seq_id", "logits"));
    }

    @Test
    void aReorderedStructIsFoundByWhatEachArrayHolds() throws Exception {
        // logits and seq_id swapped, embd first, an int field (zero) in between: offsets follow the arrays.
        assertEquals(new BatchLayout(32, 40, 56, 48),
                classify("embd", "token", "zero", "pos", "n_seq_id", "logits", "seq_id"));
    }

    @Test
    void aResultThatIsNotABatchIsRefusedWithItsReason() {
        CalibrationException noEmbd = assertThrows(CalibrationException.class,
                () -> classify("token", "pos", "n_seq_id", "seq_id", "logits", "pos"));
        assertTrue(noEmbd.getMessage().contains("not one token array"), noEmbd.getMessage());
        CalibrationException twoLogits = assertThrows(CalibrationException.class,
                () -> classify("token", "embd", "pos", "logits", "seq_id", "logits"));
        assertTrue(twoLogits.getMessage().contains("not logits, seq_id, pos and n_seq_id"), twoLogits.getMessage());
    }

    @Test
    void answersAreReadStrictly() throws Exception {
        BatchLayout layout = new BatchLayout(24, 32, 40, 48);
        assertEquals(layout, BatchAnswer.read(BatchAnswer.write(layout), Path.of("l")));
        for (String bad : List.of("", "infertop-batch 1\nbatch pos=24 n_seq_id=32 seq_id=40\nend\n",
                "infertop-batch 1\nbatch pos=24 n_seq_id=24 seq_id=40 logits=48\nend\n",
                "infertop-batch 1\nbatch pos=4 n_seq_id=32 seq_id=40 logits=48\nend\n",
                "infertop-batch 1\nbatch pos=24 n_seq_id=32 seq_id=40 logits=4096\nend\n",
                "infertop-batch 1\nbatch pos=32 n_seq_id=24 seq_id=40 logits=48\nend\n")) {
            assertThrows(CalibrationException.class, () -> BatchAnswer.read(bad, Path.of("l")), bad);
        }
        CalibrationException error = assertThrows(CalibrationException.class,
                () -> BatchAnswer.read("error it lacks llama_batch_init\n", Path.of("l")));
        assertTrue(error.getMessage().endsWith("it lacks llama_batch_init"), error.getMessage());
    }

    /** The offsets of pos, n_seq_id, seq_id and logits in {@code llama.h}'s struct llama_batch, on LP64. */
    static BatchLayout declaredIn(Path llamaH) throws Exception {
        String header = Files.readString(llamaH);
        int start = header.indexOf("typedef struct llama_batch {");
        int end = header.indexOf("} llama_batch;", start);
        assertTrue(start >= 0 && end > start, "no struct llama_batch in " + llamaH);
        String body = header.substring(start + "typedef struct llama_batch {".length(), end)
                .replaceAll("//[^\n]*", "").replaceAll("(?s)/\\*.*?\\*/", "");
        Pattern field = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)\\s*(\\**)\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*;");
        Matcher m = field.matcher(body);
        Map<String, Integer> offsets = new HashMap<>();
        List<String> seen = new ArrayList<>();
        int offset = 0;
        while (m.find()) {
            int size = !m.group(2).isEmpty() ? 8 : switch (m.group(1)) {
                case "int32_t", "llama_pos", "llama_seq_id", "llama_token", "float" -> 4;
                case "int8_t", "bool" -> 1;
                default -> throw new AssertionError("unknown field type " + m.group(1) + " in " + llamaH);
            };
            offset = (offset + size - 1) / size * size;
            offsets.put(m.group(3), offset);
            seen.add(m.group(3));
            offset += size;
        }
        assertTrue(seen.containsAll(List.of("pos", "n_seq_id", "seq_id", "logits")), "fields " + seen);
        return new BatchLayout(offsets.get("pos"), offsets.get("n_seq_id"), offsets.get("seq_id"), offsets.get("logits"));
    }
}
