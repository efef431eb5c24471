package dev.infertop.workload.whisper;

import dev.infertop.io.OutputFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A synthetic whisper model that whisper.cpp's {@code whisper_model_load} reads and {@code whisper_full} runs:
 * the shape of OpenAI's English-only models (80 mel bins, a 30 s window of 1500 audio positions, the English
 * vocabulary's 51864 ids with its special tokens at their fixed ids) with tiny widths and one layer each side,
 * and deterministic random weights, so a transcription takes seconds on two busy cores. It transcribes nonsense:
 * what it is for is the encoder and decoder graphs whisper.cpp builds and computes.
 *
 * @param audioState  n_audio_state = n_text_state (whisper.cpp asserts they are equal)
 * @param audioHeads  n_audio_head
 * @param audioLayers n_audio_layer
 * @param textHeads   n_text_head
 * @param textLayers  n_text_layer
 * @param seed        the PRNG seed of the weights
 */
public record SyntheticWhisperModel(int audioState, int audioHeads, int audioLayers, int textHeads, int textLayers,
                                    long seed) {

    /** Bump whenever the bytes generated for a given spec change, so cached files are regenerated. */
    public static final int GENERATOR_VERSION = 1;

    /** OpenAI's English-only vocabulary size: whisper.cpp places eot, sot and the timestamps by it. */
    public static final int VOCAB_SIZE = 51864;
    /** 30 s of 10 ms mel frames, halved by the encoder's second convolution (stride 2). */
    public static final int AUDIO_CONTEXT = 1500;
    public static final int TEXT_CONTEXT = 448;
    public static final int MEL_BINS = 80;
    /** WHISPER_N_FFT / 2 + 1: the FFT bins each mel filter weighs. */
    public static final int FFT_BINS = 201;
    /** The ordinary text tokens written to the file: whisper.cpp names the ids from eot (50256) on itself. */
    public static final int TEXT_TOKENS = 50256;
    /** ggml_ftype GGML_FTYPE_MOSTLY_F16: matrices and convolutions F16, the rest F32. */
    static final int FTYPE_MOSTLY_F16 = 1;

    /** The test model: 64 wide, one head, one layer each side (about 5 M parameters, most in the vocabulary). */
    public static final SyntheticWhisperModel TINY = new SyntheticWhisperModel(64, 1, 1, 1, 1, 1);

    public SyntheticWhisperModel {
        if (audioState <= 0 || audioHeads <= 0 || audioLayers <= 0 || textHeads <= 0 || textLayers <= 0) {
            throw new IllegalArgumentException("whisper model dimensions must be positive");
        }
        if (audioState % audioHeads != 0 || audioState % textHeads != 0) {
            throw new IllegalArgumentException("the state width " + audioState + " must divide by the head counts");
        }
    }

    /** Writes the model atomically (a fresh sibling renamed over {@code file}; a link there is refused). */
    public Path writeTo(Path file) throws IOException {
        byte[] bytes = WhisperModelFile.encode(this);
        OutputFiles.replace(file, out -> out.write(bytes));
        return file;
    }

    /** Named by a hash of the spec and generator version: a changed spec gets a fresh file. */
    public Path cachedFile(Path cacheDir) {
        return cacheDir.resolve("whisper-synthetic-" + specHash() + ".bin");
    }

    /** {@link #cachedFile} after writing it if it is missing or has another size. */
    public Path writeToCache(Path cacheDir) throws IOException {
        Path file = cachedFile(cacheDir);
        if (Files.isRegularFile(file) && Files.size(file) == WhisperModelFile.sizeBytes(this)) {
            return file;
        }
        Files.createDirectories(cacheDir);
        return writeTo(file);
    }

    String specHash() {
        String canonical = String.join("|", "whisper-v" + GENERATOR_VERSION, Integer.toString(audioState),
                Integer.toString(audioHeads), Integer.toString(audioLayers), Integer.toString(textHeads),
                Integer.toString(textLayers), Long.toHexString(seed));
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }
}
