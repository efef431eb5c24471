package dev.infertop.workload.whisper;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The synthetic model read back the way whisper_model_load reads it (src/whisper.cpp): magic, hyperparameters,
 * filters, vocabulary, then every tensor whisper.cpp creates for these hyperparameters, by name, with its shape and
 * type, and nothing after. WhisperIT runs Debian's whisper-cli on it.
 */
class WhisperModelFileTest {
    private static final SyntheticWhisperModel M = SyntheticWhisperModel.TINY;

    @Test
    void readsBackAsWhisperModelLoadReadsIt() {
        byte[] bytes = WhisperModelFile.encode(M);
        assertEquals(WhisperModelFile.sizeBytes(M), bytes.length);
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x67676d6c, in.getInt(), "GGML_FILE_MAGIC");
        int[] hparams = new int[11];
        for (int i = 0; i < hparams.length; i++) {
            hparams[i] = in.getInt();
        }
        // n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, n_text_ctx, n_text_state, n_text_head,
        // n_text_layer, n_mels, ftype
        assertArrayEquals(new int[] {51864, 1500, 64, 1, 1, 448, 64, 1, 1, 80, 1}, hparams);
        assertEquals(80, in.getInt());
        assertEquals(201, in.getInt());
        in.position(in.position() + 80 * 201 * 4);
        int words = in.getInt();
        assertEquals(50256, words, "the text tokens; whisper.cpp names eot (50256) and the rest itself");
        Map<Integer, String> vocab = new LinkedHashMap<>();
        for (int id = 0; id < words; id++) {
            byte[] word = new byte[in.getInt()];
            in.get(word);
            vocab.put(id, new String(word, StandardCharsets.US_ASCII));
        }
        assertEquals(" ", vocab.get(220), "the blank whisper.cpp suppresses by text");
        assertEquals("!", vocab.get(0));
        Map<String, int[]> tensors = new LinkedHashMap<>();
        while (in.hasRemaining()) {
            int dims = in.getInt();
            byte[] name = new byte[in.getInt()];
            int type = in.getInt();
            int[] ne = new int[dims];
            long elements = 1;
            for (int i = 0; i < dims; i++) {
                ne[i] = in.getInt();
                elements *= ne[i];
            }
            in.get(name);
            in.position(Math.toIntExact(in.position() + elements * (type == 1 ? 2 : 4)));
            tensors.put(new String(name, StandardCharsets.US_ASCII), prepend(type, ne));
        }
        // 7 encoder tensors + 15 a block, 4 decoder tensors + 24 a block (whisper_model_load's n_tensors less its 10)
        assertEquals(7 + 15 + 4 + 24, tensors.size(), tensors.keySet().toString());
        assertArrayEquals(new int[] {1, 64, 51864}, tensors.get("decoder.token_embedding.weight"));
        assertArrayEquals(new int[] {0, 64, 1500}, tensors.get("encoder.positional_embedding"));
        assertArrayEquals(new int[] {1, 3, 80, 64}, tensors.get("encoder.conv1.weight"));
        assertArrayEquals(new int[] {0, 1, 64}, tensors.get("encoder.conv1.bias"));
        assertArrayEquals(new int[] {1, 64, 256}, tensors.get("decoder.blocks.0.mlp.0.weight"));
        assertArrayEquals(new int[] {0, 64}, tensors.get("decoder.blocks.0.cross_attn.value.bias"));
        assertTrue(tensors.containsKey("encoder.ln_post.bias"));
    }

    private static int[] prepend(int type, int[] ne) {
        int[] out = new int[ne.length + 1];
        out[0] = type;
        System.arraycopy(ne, 0, out, 1, ne.length);
        return out;
    }

    @Test
    void theSameSpecWritesTheSameBytesAndTheWavIsSixteenKilohertzMonoPcm(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path a = M.writeToCache(dir);
        assertEquals(a, M.writeToCache(dir));
        assertArrayEquals(WhisperModelFile.encode(M), Files.readAllBytes(a));
        assertTrue(!a.equals(new SyntheticWhisperModel(64, 1, 1, 1, 1, 2).cachedFile(dir)), "the seed names the file");
        ByteBuffer wav = ByteBuffer.wrap(SyntheticWav.encode(3)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(44 + 2 * 48_000, wav.capacity());
        assertEquals(1, wav.getShort(20), "PCM");
        assertEquals(1, wav.getShort(22), "mono");
        assertEquals(16_000, wav.getInt(24));
        assertEquals(16, wav.getShort(34), "bits per sample");
        assertEquals(2 * 48_000, wav.getInt(40));
    }
}
