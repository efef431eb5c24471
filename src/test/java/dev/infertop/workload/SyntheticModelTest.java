package dev.infertop.workload;

import dev.infertop.workload.gguf.GgmlType;
import dev.infertop.workload.gguf.GgufTestReader;
import dev.infertop.workload.gguf.GgufTestReader.TensorInfo;
import dev.infertop.workload.gguf.GgufValueType;
import dev.infertop.workload.gguf.GgufWriter;
import dev.infertop.workload.gguf.ProgressListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SyntheticModelTest {

    @TempDir
    Path dir;

    @Test
    void tinyDenseModelHasExactlyTheKeysAndValuesLlamaCppReads() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny");
        GgufTestReader gguf = GgufTestReader.read(model.writeTo(dir.resolve("tiny.gguf"), ProgressListener.NONE));

        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("general.alignment", 32L);
        expected.put("general.architecture", "llama");
        expected.put("general.name", "infertop-synthetic-tiny");
        expected.put("general.file_type", 1L);
        expected.put("llama.vocab_size", 2048L);
        expected.put("llama.context_length", 2048L);
        expected.put("llama.embedding_length", 256L);
        expected.put("llama.block_count", 2L);
        expected.put("llama.feed_forward_length", 768L);
        expected.put("llama.attention.head_count", 4L);
        expected.put("llama.attention.head_count_kv", 2L);
        expected.put("llama.rope.dimension_count", 64L);
        expected.put("llama.attention.layer_norm_rms_epsilon", 1e-5f);
        expected.put("llama.rope.freq_base", 10000f);
        expected.put("tokenizer.ggml.model", "llama");
        expected.put("tokenizer.ggml.tokens", null);
        expected.put("tokenizer.ggml.scores", null);
        expected.put("tokenizer.ggml.token_type", null);
        expected.put("tokenizer.ggml.bos_token_id", 1L);
        expected.put("tokenizer.ggml.eos_token_id", 2L);
        expected.put("tokenizer.ggml.unknown_token_id", 0L);
        expected.put("tokenizer.ggml.add_bos_token", true);
        expected.put("tokenizer.ggml.add_eos_token", false);
        expected.put("infertop.synthetic.generator_version", (long) SyntheticModel.GENERATOR_VERSION);
        expected.put("infertop.synthetic.preset", "tiny");
        expected.put("infertop.synthetic.seed", 1L);
        expected.put("infertop.synthetic.router_skew", 0f);
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(gguf.metadata.keySet()));
        expected.forEach((key, value) -> {
            if (value != null) {
                assertEquals(value, gguf.metadata.get(key), key);
            }
        });
        assertEquals(GgufValueType.FLOAT32, gguf.metadataTypes.get("llama.rope.freq_base"));
        assertEquals(GgufValueType.UINT32, gguf.metadataTypes.get("llama.block_count"));

        assertVocabulary(gguf, 2048);
        assertEquals(model.fileSizeBytes(), gguf.fileSizeBytes);
    }

    @Test
    void tinyDenseModelHasEveryTensorWithLlamaCppShapesAndTypes() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny");
        GgufTestReader gguf = GgufTestReader.read(model.writeTo(dir.resolve("tiny.gguf"), ProgressListener.NONE));

        Map<String, long[]> shapes = new LinkedHashMap<>();
        shapes.put("token_embd.weight", new long[] {256, 2048});
        shapes.put("output_norm.weight", new long[] {256});
        shapes.put("output.weight", new long[] {256, 2048});
        for (int i = 0; i < 2; i++) {
            String b = "blk." + i + ".";
            shapes.put(b + "attn_norm.weight", new long[] {256});
            shapes.put(b + "attn_q.weight", new long[] {256, 256});
            shapes.put(b + "attn_k.weight", new long[] {256, 128});
            shapes.put(b + "attn_v.weight", new long[] {256, 128});
            shapes.put(b + "attn_output.weight", new long[] {256, 256});
            shapes.put(b + "ffn_norm.weight", new long[] {256});
            shapes.put(b + "ffn_gate.weight", new long[] {256, 768});
            shapes.put(b + "ffn_up.weight", new long[] {256, 768});
            shapes.put(b + "ffn_down.weight", new long[] {768, 256});
        }
        assertShapes(gguf, shapes);
        assertEquals(model.parameterCount(), gguf.tensors.values().stream().mapToLong(TensorInfo::elementCount).sum());
        assertAllFinite(gguf);
        assertEquals(1f, gguf.element("blk.1.ffn_norm.weight", 255));
    }

    @Test
    void tinyMoeModelHasExpertKeysAndTensors() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny-moe");
        GgufTestReader gguf = GgufTestReader.read(model.writeTo(dir.resolve("tiny-moe.gguf"), ProgressListener.NONE));

        assertEquals(8L, gguf.metadata.get("llama.expert_count"));
        assertEquals(2L, gguf.metadata.get("llama.expert_used_count"));
        assertEquals(1.0f, gguf.metadata.get("infertop.synthetic.router_skew"));
        Map<String, long[]> shapes = new LinkedHashMap<>();
        shapes.put("token_embd.weight", new long[] {256, 2048});
        shapes.put("output_norm.weight", new long[] {256});
        shapes.put("output.weight", new long[] {256, 2048});
        for (int i = 0; i < 2; i++) {
            String b = "blk." + i + ".";
            shapes.put(b + "attn_norm.weight", new long[] {256});
            shapes.put(b + "attn_q.weight", new long[] {256, 256});
            shapes.put(b + "attn_k.weight", new long[] {256, 128});
            shapes.put(b + "attn_v.weight", new long[] {256, 128});
            shapes.put(b + "attn_output.weight", new long[] {256, 256});
            shapes.put(b + "ffn_norm.weight", new long[] {256});
            shapes.put(b + "ffn_gate_inp.weight", new long[] {256, 8});
            shapes.put(b + "ffn_gate_exps.weight", new long[] {256, 128, 8});
            shapes.put(b + "ffn_up_exps.weight", new long[] {256, 128, 8});
            shapes.put(b + "ffn_down_exps.weight", new long[] {128, 256, 8});
        }
        assertShapes(gguf, shapes);
        assertEquals(GgmlType.F32.code(), gguf.tensors.get("blk.0.ffn_gate_inp.weight").typeCode());
        assertEquals(model.parameterCount(), gguf.tensors.values().stream().mapToLong(TensorInfo::elementCount).sum());
        assertEquals(model.fileSizeBytes(), gguf.fileSizeBytes);
        assertAllFinite(gguf);
    }

    /**
     * Replays llama.cpp's routing on the file's own bytes: the class dimensions of the residual stream must
     * be untouched by every layer, and router top-k over them must pick the designed experts in order,
     * which makes the measured frequencies over the whole vocabulary equal the expected ones exactly.
     */
    @Test
    void routerWeightsInTheFileSelectTheDesignedExpertsWithExactlyTheExpectedFrequencies() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny-moe");
        GgufTestReader gguf = GgufTestReader.read(model.writeTo(dir.resolve("tiny-moe.gguf"), ProgressListener.NONE));
        RouterDesign design = model.routerDesign();
        int embd = model.embeddingLength();
        int classes = design.classCount();
        int experts = model.expertCount();
        int ff = model.feedForwardLength();

        for (int layer = 0; layer < model.layerCount(); layer++) {
            String b = "blk." + layer + ".";
            for (int out = 0; out < classes; out++) {
                for (int in = 0; in < embd; in++) {
                    assertEquals(0f, gguf.element(b + "attn_output.weight", (long) out * embd + in), "attention writes class dim " + out);
                }
                for (int e = 0; e < experts; e++) {
                    for (int in = 0; in < ff; in++) {
                        assertEquals(0f, gguf.element(b + "ffn_down_exps.weight", ((long) e * embd + out) * ff + in),
                                "expert " + e + " writes class dim " + out);
                    }
                }
            }
        }

        double[][] measured = new double[model.layerCount()][experts];
        for (int token = 0; token < model.vocabSize(); token++) {
            float[] embedding = new float[embd];
            double sumSquares = 0;
            for (int d = 0; d < embd; d++) {
                embedding[d] = gguf.element("token_embd.weight", (long) token * embd + d);
                sumSquares += embedding[d] * embedding[d];
            }
            for (int c = 0; c < classes; c++) {
                assertEquals(c == design.classOfToken(token) ? 1f : 0f, embedding[c], "token " + token + " class dim " + c);
            }
            double rms = Math.sqrt(sumSquares / embd + SyntheticGguf.RMS_NORM_EPSILON);
            for (int layer = 0; layer < model.layerCount(); layer++) {
                double[] logits = new double[experts];
                for (int e = 0; e < experts; e++) {
                    for (int d = 0; d < embd; d++) {
                        logits[e] += gguf.element("blk." + layer + ".ffn_gate_inp.weight", (long) e * embd + d) * embedding[d] / rms;
                    }
                }
                int[] ranked = java.util.stream.IntStream.range(0, experts).boxed()
                        .sorted((x, y) -> Double.compare(logits[y], logits[x])).mapToInt(Integer::intValue).toArray();
                int used = model.expertsUsedPerToken();
                int[] topK = Arrays.copyOf(ranked, used);
                assertArrayEquals(design.expertsForToken(layer, token), topK, "layer " + layer + " token " + token);
                assertTrue(logits[ranked[used - 1]] > logits[ranked[used]] + 0.5,
                        "clear margin between the last chosen and the first unchosen expert");
                for (int e : topK) {
                    measured[layer][e] += 1.0 / model.vocabSize();
                }
            }
        }
        double[][] expected = model.expectedExpertFrequencies();
        for (int layer = 0; layer < model.layerCount(); layer++) {
            assertArrayEquals(expected[layer], measured[layer], 1e-9, "layer " + layer);
            assertEquals(2.0, Arrays.stream(expected[layer]).sum(), 1e-12);
        }
        assertTrue(expected[0][0] > expected[0][7] * 4, "tiny-moe is skewed: " + Arrays.toString(expected[0]));
    }

    @Test
    void sameSpecWritesByteIdenticalFilesAndAnotherSeedDoesNot() throws Exception {
        SyntheticModel model = SyntheticModel.preset("tiny-moe");
        String first = sha256(model.writeTo(dir.resolve("a.gguf"), ProgressListener.NONE));
        String second = sha256(model.writeTo(dir.resolve("b.gguf"), ProgressListener.NONE));
        String reseeded = sha256(model.withSeed(2).writeTo(dir.resolve("c.gguf"), ProgressListener.NONE));
        String dense = sha256(SyntheticModel.preset("tiny").writeTo(dir.resolve("d.gguf"), ProgressListener.NONE));
        assertEquals(first, second);
        assertNotEquals(first, reseeded);
        assertNotEquals(first, dense);
    }

    @Test
    void progressEndsAtTheFileSize() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny");
        List<Long> written = new ArrayList<>();
        AtomicInteger wrongTotals = new AtomicInteger();
        long size = model.fileSizeBytes();
        model.writeTo(dir.resolve("p.gguf"), (bytes, total) -> {
            written.add(bytes);
            if (total != size) {
                wrongTotals.incrementAndGet();
            }
        });
        assertTrue(written.size() > 3, "a 5 MiB model reports several chunks");
        assertEquals(size, written.getLast());
        assertEquals(0, wrongTotals.get());
    }

    @Test
    void presetsHaveTheAdvertisedSizes() {
        assertEquals(List.of("bench", "bench-moe", "deep", "tiny", "tiny-moe"), SyntheticModel.presetNames());
        SyntheticModel bench = SyntheticModel.preset("bench");
        assertTrue(Math.abs(bench.parameterCount() - 245_000_000L) < 2_000_000L, "bench ~245 M params: " + bench.parameterCount());
        long benchMiB = bench.fileSizeBytes() >> 20;
        assertTrue(benchMiB > 460 && benchMiB < 480, "bench ~470 MiB: " + benchMiB);
        SyntheticModel benchMoe = SyntheticModel.preset("bench-moe");
        assertTrue(benchMoe.isMoe());
        assertTrue(Math.abs(benchMoe.parameterCount() - bench.parameterCount()) < 1_000_000L, "bench-moe is as big as bench");
        assertTrue(SyntheticModel.preset("tiny").parameterCount() < 4_000_000L);
        assertTrue(SyntheticModel.preset("tiny-moe").parameterCount() < 4_000_000L);
        SyntheticModel deep = SyntheticModel.preset("deep");
        assertEquals(32, deep.layerCount());
        assertTrue(Math.abs(deep.parameterCount() - 26_000_000L) < 1_000_000L, "deep ~26 M params: " + deep.parameterCount());
    }

    @Test
    void unknownPresetNamesTheValidOnes() {
        IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class, () -> SyntheticModel.preset("huge"));
        assertEquals("unknown synthetic model 'huge'; valid: bench, bench-moe, deep, tiny, tiny-moe", thrown.getMessage());
    }

    @Test
    void denseModelsHaveNoExpertFrequencies() {
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> SyntheticModel.preset("tiny").expectedExpertFrequencies());
        assertEquals("model 'tiny' is dense: it has no expert router", thrown.getMessage());
    }

    @Test
    void rejectsSpecsLlamaCppCannotLoad() {
        SyntheticModel tiny = SyntheticModel.preset("tiny");
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("x", 100, 256, 2, 768, 4, 2, 2048, 0, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("x", 2048, 250, 2, 768, 4, 2, 2048, 0, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("x", 2048, 256, 2, 768, 4, 3, 2048, 0, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("x", 2048, 256, 2, 768, 4, 2, 2048, 8, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("x", 2048, 256, 2, 768, 4, 2, 2048, 0, 1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SyntheticModel("X y", 2048, 256, 2, 768, 4, 2, 2048, 0, 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> tiny.withRouterSkew(-0.5));
    }

    @Test
    void cacheNamesFilesBySpecAndReusesThem() throws IOException {
        SyntheticModel model = SyntheticModel.preset("tiny");
        Path cached = model.cachedFile(dir);
        assertTrue(cached.getFileName().toString().matches("tiny-s1-[0-9a-f]{12}\\.gguf"), cached.toString());
        assertEquals(cached, SyntheticModel.preset("tiny").cachedFile(dir));
        assertNotEquals(cached, model.withSeed(2).cachedFile(dir));
        assertNotEquals(model.specHash(), model.withRouterSkew(0.5).specHash());

        AtomicInteger reports = new AtomicInteger();
        Path sub = dir.resolve("sub");
        assertEquals(model.cachedFile(sub), model.writeToCache(sub, (w, t) -> reports.incrementAndGet()));
        int firstWriteReports = reports.get();
        assertTrue(firstWriteReports > 0);
        Path again = model.writeToCache(sub, (w, t) -> reports.incrementAndGet());
        assertEquals(firstWriteReports, reports.get(), "an existing complete file is reused, not rewritten");
        assertEquals(model.fileSizeBytes(), Files.size(again));

        Files.writeString(again, "truncated");
        model.writeToCache(sub, ProgressListener.NONE);
        assertEquals(model.fileSizeBytes(), Files.size(again), "a file of the wrong size is regenerated");
        assertNoTemporaryBeside(again);
    }

    private static void assertVocabulary(GgufTestReader gguf, int vocab) {
        @SuppressWarnings("unchecked")
        List<String> tokens = (List<String>) gguf.metadata.get("tokenizer.ggml.tokens");
        assertEquals(vocab, tokens.size());
        assertEquals(List.of("<unk>", "<s>", "</s>", "<0x00>", "<0x01>"), tokens.subList(0, 5));
        assertEquals("<0x0A>", tokens.get(3 + 10));
        assertEquals("<0xFF>", tokens.get(258));
        assertEquals(vocab, tokens.stream().distinct().count(), "token strings are unique");
        assertTrue(tokens.get(259).startsWith("\u2581"));
        float[] scores = (float[]) gguf.metadata.get("tokenizer.ggml.scores");
        assertEquals(vocab, scores.length);
        for (float score : scores) {
            assertEquals(0f, score);
        }
        int[] types = (int[]) gguf.metadata.get("tokenizer.ggml.token_type");
        assertEquals(vocab, types.length);
        assertArrayEquals(new int[] {2, 3, 3}, Arrays.copyOf(types, 3));
        for (int i = 3; i < vocab; i++) {
            assertEquals(i < 259 ? 6 : 1, types[i], "token type of " + i);
        }
    }

    private static void assertShapes(GgufTestReader gguf, Map<String, long[]> shapes) {
        assertEquals(shapes.keySet(), gguf.tensors.keySet());
        shapes.forEach((name, dims) -> {
            TensorInfo info = gguf.tensors.get(name);
            assertArrayEquals(dims, info.dims(), name);
            int expectedType = dims.length == 1 || name.endsWith("ffn_gate_inp.weight") ? GgmlType.F32.code() : GgmlType.F16.code();
            assertEquals(expectedType, info.typeCode(), name + " type");
        });
    }

    private static void assertAllFinite(GgufTestReader gguf) {
        for (TensorInfo info : gguf.tensors.values()) {
            for (long i = 0; i < info.elementCount(); i++) {
                float value = gguf.element(info.name(), i);
                if (!Float.isFinite(value) || Math.abs(value) > 1f) {
                    throw new AssertionError(info.name() + "[" + i + "] = " + value);
                }
            }
        }
    }

    private static String sha256(Path file) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), digest)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The writer's temporary (a fresh .NAME.RANDOM.tmp) is gone. */
    private static void assertNoTemporaryBeside(Path file) throws IOException {
        try (java.util.stream.Stream<Path> siblings = Files.list(file.toAbsolutePath().getParent())) {
            List<String> temporaries = siblings.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
            assertTrue(temporaries.isEmpty(), temporaries.toString());
        }
    }
}
