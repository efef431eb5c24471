package dev.infertop.workload.whisper;

import dev.infertop.workload.SplitMix64;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * whisper.cpp's model file, as {@code whisper_model_load} (src/whisper.cpp) reads it, little-endian throughout:
 * the ggml magic; eleven int32 hyperparameters (n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
 * n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype); the mel filter bank (n_mel, n_fft, then
 * n_mel × n_fft float32); the vocabulary (a count, then each word as a uint32 length and its bytes); then every
 * tensor as int32 n_dims, int32 name length, int32 ggml type, n_dims int32 sizes (ggml's order, ne[0] first), the
 * name and the data. Tensors are looked up by name, every one the loader creates must be present, and each one's
 * shape and type size must be the loader's exactly (src/whisper-arch.h names them).
 */
final class WhisperModelFile {
    /** GGML_FILE_MAGIC, "ggml" read as a little-endian uint32. */
    static final int MAGIC = 0x67676d6c;
    static final int TYPE_F32 = 0;
    static final int TYPE_F16 = 1;
    static final float WEIGHT_RANGE = 0.05f;

    private WhisperModelFile() {
    }

    /** One tensor: its name, ggml type, sizes in ggml's order, and how its values are made. */
    private record Tensor(String name, int type, int[] sizes, Values values) {
        long elements() {
            long n = 1;
            for (int size : sizes) {
                n *= size;
            }
            return n;
        }

        long dataBytes() {
            return elements() * (type == TYPE_F16 ? 2 : 4);
        }
    }

    private enum Values { RANDOM, ONES, ZEROS }

    static long sizeBytes(SyntheticWhisperModel model) {
        long size = headerBytes();
        for (Tensor tensor : tensors(model)) {
            size += 12 + 4L * tensor.sizes().length + tensor.name().length() + tensor.dataBytes();
        }
        return size;
    }

    static byte[] encode(SyntheticWhisperModel model) {
        List<Tensor> tensors = tensors(model);
        ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(sizeBytes(model))).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(MAGIC);
        int state = model.audioState();
        for (int value : new int[] {SyntheticWhisperModel.VOCAB_SIZE, SyntheticWhisperModel.AUDIO_CONTEXT, state,
                model.audioHeads(), model.audioLayers(), SyntheticWhisperModel.TEXT_CONTEXT, state, model.textHeads(),
                model.textLayers(), SyntheticWhisperModel.MEL_BINS, SyntheticWhisperModel.FTYPE_MOSTLY_F16}) {
            out.putInt(value);
        }
        out.putInt(SyntheticWhisperModel.MEL_BINS).putInt(SyntheticWhisperModel.FFT_BINS);
        for (int mel = 0; mel < SyntheticWhisperModel.MEL_BINS; mel++) {
            for (int bin = 0; bin < SyntheticWhisperModel.FFT_BINS; bin++) {
                out.putFloat(melFilter(mel, bin));
            }
        }
        out.putInt(SyntheticWhisperModel.TEXT_TOKENS);
        for (int id = 0; id < SyntheticWhisperModel.TEXT_TOKENS; id++) {
            byte[] word = word(id);
            out.putInt(word.length).put(word);
        }
        for (Tensor tensor : tensors) {
            byte[] name = tensor.name().getBytes(StandardCharsets.US_ASCII);
            out.putInt(tensor.sizes().length).putInt(name.length).putInt(tensor.type());
            for (int size : tensor.sizes()) {
                out.putInt(size);
            }
            out.put(name);
            putValues(out, tensor, model.seed());
        }
        if (out.hasRemaining()) {
            throw new IllegalStateException("whisper model: " + out.remaining() + " bytes left unwritten");
        }
        return out.array();
    }

    private static long headerBytes() {
        long size = 4 + 11 * 4 + 8 + 4L * SyntheticWhisperModel.MEL_BINS * SyntheticWhisperModel.FFT_BINS + 4;
        for (int id = 0; id < SyntheticWhisperModel.TEXT_TOKENS; id++) {
            size += 4 + word(id).length;
        }
        return size;
    }

    /** A triangle around each mel bin's centre, spread evenly over the FFT bins: the shape, not the mel scale. */
    private static float melFilter(int mel, int bin) {
        double spacing = (SyntheticWhisperModel.FFT_BINS - 1.0) / (SyntheticWhisperModel.MEL_BINS + 1);
        double distance = Math.abs(bin - (mel + 1) * spacing) / spacing;
        return (float) Math.max(0, 1 - distance);
    }

    /** GPT-2's byte-level id of the lone space, which whisper.cpp's blank suppression looks up by text. */
    static final int SPACE_TOKEN = 220;

    /**
     * Printable words (the file's bytes reach a terminal through whisper-cli's transcript): GPT-2's first 94 ids are
     * '!' to '~', id 220 the space whisper.cpp looks up; the rest " wN".
     */
    private static byte[] word(int id) {
        String word = id < 94 ? String.valueOf((char) ('!' + id)) : id == SPACE_TOKEN ? " " : " w" + id;
        return word.getBytes(StandardCharsets.US_ASCII);
    }

    private static void putValues(ByteBuffer out, Tensor tensor, long seed) {
        SplitMix64 random = new SplitMix64(SplitMix64.streamSeed(seed, tensor.name().hashCode()));
        for (long i = 0; i < tensor.elements(); i++) {
            float value = switch (tensor.values()) {
                case RANDOM -> random.nextSignedUnitFloat() * WEIGHT_RANGE;
                case ONES -> 1f;
                case ZEROS -> 0f;
            };
            if (tensor.type() == TYPE_F16) {
                out.putShort(Float.floatToFloat16(value));
            } else {
                out.putFloat(value);
            }
        }
    }

    /** Every tensor whisper_model_load creates, with its shapes (src/whisper.cpp, "prepare tensors for the weights"). */
    private static List<Tensor> tensors(SyntheticWhisperModel m) {
        int n = m.audioState();
        List<Tensor> t = new ArrayList<>();
        t.add(f32("encoder.positional_embedding", Values.RANDOM, n, SyntheticWhisperModel.AUDIO_CONTEXT));
        t.add(f16("encoder.conv1.weight", 3, SyntheticWhisperModel.MEL_BINS, n));
        t.add(f32("encoder.conv1.bias", Values.ZEROS, 1, n));
        t.add(f16("encoder.conv2.weight", 3, n, n));
        t.add(f32("encoder.conv2.bias", Values.ZEROS, 1, n));
        t.add(f32("encoder.ln_post.weight", Values.ONES, n));
        t.add(f32("encoder.ln_post.bias", Values.ZEROS, n));
        for (int i = 0; i < m.audioLayers(); i++) {
            block(t, "encoder.blocks." + i + ".", n, false);
        }
        t.add(f32("decoder.positional_embedding", Values.RANDOM, n, SyntheticWhisperModel.TEXT_CONTEXT));
        t.add(f16("decoder.token_embedding.weight", n, SyntheticWhisperModel.VOCAB_SIZE));
        t.add(f32("decoder.ln.weight", Values.ONES, n));
        t.add(f32("decoder.ln.bias", Values.ZEROS, n));
        for (int i = 0; i < m.textLayers(); i++) {
            block(t, "decoder.blocks." + i + ".", n, true);
        }
        return t;
    }

    private static void block(List<Tensor> t, String prefix, int n, boolean cross) {
        t.add(f32(prefix + "mlp_ln.weight", Values.ONES, n));
        t.add(f32(prefix + "mlp_ln.bias", Values.ZEROS, n));
        t.add(f16(prefix + "mlp.0.weight", n, 4 * n));
        t.add(f32(prefix + "mlp.0.bias", Values.ZEROS, 4 * n));
        t.add(f16(prefix + "mlp.2.weight", 4 * n, n));
        t.add(f32(prefix + "mlp.2.bias", Values.ZEROS, n));
        attention(t, prefix + "attn", n);
        if (cross) {
            attention(t, prefix + "cross_attn", n);
        }
    }

    private static void attention(List<Tensor> t, String prefix, int n) {
        t.add(f32(prefix + "_ln.weight", Values.ONES, n));
        t.add(f32(prefix + "_ln.bias", Values.ZEROS, n));
        t.add(f16(prefix + ".query.weight", n, n));
        t.add(f32(prefix + ".query.bias", Values.ZEROS, n));
        t.add(f16(prefix + ".key.weight", n, n));
        t.add(f16(prefix + ".value.weight", n, n));
        t.add(f32(prefix + ".value.bias", Values.ZEROS, n));
        t.add(f16(prefix + ".out.weight", n, n));
        t.add(f32(prefix + ".out.bias", Values.ZEROS, n));
    }

    private static Tensor f16(String name, int... sizes) {
        return new Tensor(name, TYPE_F16, sizes, Values.RANDOM);
    }

    private static Tensor f32(String name, Values values, int... sizes) {
        return new Tensor(name, TYPE_F32, sizes, values);
    }
}
