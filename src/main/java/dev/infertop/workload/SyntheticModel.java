package dev.infertop.workload;

import dev.infertop.workload.gguf.ProgressListener;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A synthetic llama-architecture model that llama.cpp loads and runs: random F16 weights, generated
 * deterministically from the spec (same spec, byte-identical file), so workloads need no downloads.
 * MoE models route tokens by a designed skew with exactly known expert frequencies: see {@link RouterDesign}.
 *
 * @param presetName          short name, also used in cache file names
 * @param vocabSize           n_vocab, at least the 259 special and byte tokens
 * @param embeddingLength     n_embd
 * @param layerCount          n_layer (block count)
 * @param feedForwardLength   n_ff; for MoE the hidden size of each expert
 * @param headCount           n_head
 * @param kvHeadCount         n_head_kv (grouped-query attention when below n_head)
 * @param contextLength       n_ctx_train, llama.cpp's default context size
 * @param expertCount         n_expert, 0 for a dense model
 * @param expertsUsedPerToken n_expert_used, 0 for a dense model
 * @param seed                the PRNG seed of all random weights
 * @param routerSkew          Zipf exponent of the expert frequencies (0 = uniform); ignored when dense
 */
public record SyntheticModel(
        String presetName,
        int vocabSize,
        int embeddingLength,
        int layerCount,
        int feedForwardLength,
        int headCount,
        int kvHeadCount,
        int contextLength,
        int expertCount,
        int expertsUsedPerToken,
        long seed,
        double routerSkew) {

    /** Bump whenever the bytes generated for a given spec change, so cached files are regenerated. */
    public static final int GENERATOR_VERSION = 1;
    public static final long DEFAULT_SEED = 1;

    private static final Pattern PRESET_NAME = Pattern.compile("[a-z0-9][a-z0-9-]*");
    private static final int MAX_EXPERTS = 1024; // llama.cpp's LLAMA_MAX_EXPERTS

    private static final Map<String, SyntheticModel> PRESETS = Map.of(
            // ~2.6 M params, GQA: loads in milliseconds, tens of thousands of tokens/s on a laptop.
            "tiny", new SyntheticModel("tiny", 2048, 256, 2, 768, 4, 2, 2048, 0, 0, DEFAULT_SEED, 0),
            // ~3 M params: 8 experts of 128, 2 per token, Zipf(1) skew.
            "tiny-moe", new SyntheticModel("tiny-moe", 2048, 256, 2, 128, 4, 2, 2048, 8, 2, DEFAULT_SEED, 1.0),
            // ~246 M params, ~470 MiB F16: a llama-2-style 1B-ish shape, decode in tens of tokens/s on CPU.
            "bench", new SyntheticModel("bench", 32000, 1024, 16, 2816, 16, 4, 2048, 0, 0, DEFAULT_SEED, 0),
            // ~26 M params in 32 layers: a deep graph (~1,100 nodes a token) that is quick to load and run.
            "deep", new SyntheticModel("deep", 2048, 256, 32, 768, 4, 2, 2048, 0, 0, DEFAULT_SEED, 0),
            // Same file size as bench: the dense FFN split into 8 experts of 352, 2 per token (a quarter active).
            "bench-moe", new SyntheticModel("bench-moe", 32000, 1024, 16, 352, 16, 4, 2048, 8, 2, DEFAULT_SEED, 1.0));

    public SyntheticModel {
        if (presetName == null || !PRESET_NAME.matcher(presetName).matches()) {
            throw new IllegalArgumentException("model name must be lowercase letters, digits and dashes, got " + presetName);
        }
        requirePositive("vocabulary size", vocabSize);
        requirePositive("embedding length", embeddingLength);
        requirePositive("layer count", layerCount);
        requirePositive("feed-forward length", feedForwardLength);
        requirePositive("head count", headCount);
        requirePositive("KV head count", kvHeadCount);
        requirePositive("context length", contextLength);
        if (vocabSize < SyntheticVocab.RESERVED_TOKEN_COUNT) {
            throw new IllegalArgumentException("vocabulary size must be at least " + SyntheticVocab.RESERVED_TOKEN_COUNT
                    + " (3 special + 256 byte tokens), got " + vocabSize);
        }
        if (embeddingLength % headCount != 0 || (embeddingLength / headCount) % 2 != 0) {
            throw new IllegalArgumentException("embedding length " + embeddingLength + " must split into " + headCount
                    + " heads of even size (RoPE rotates pairs)");
        }
        if (headCount % kvHeadCount != 0) {
            throw new IllegalArgumentException("head count " + headCount + " must be a multiple of KV head count " + kvHeadCount);
        }
        if (expertCount == 0 ? expertsUsedPerToken != 0
                : expertsUsedPerToken < 1 || expertsUsedPerToken > expertCount || expertCount > MAX_EXPERTS) {
            throw new IllegalArgumentException("need experts = used = 0 (dense) or 1 <= used <= experts <= " + MAX_EXPERTS
                    + ", got " + expertsUsedPerToken + " of " + expertCount);
        }
        if (expertCount >= embeddingLength) {
            // Each routing class needs its own embedding dimension, and there can be as many classes as experts.
            throw new IllegalArgumentException("expert count " + expertCount + " must be below embedding length " + embeddingLength);
        }
        if (!(routerSkew >= 0) || Double.isInfinite(routerSkew)) {
            throw new IllegalArgumentException("router skew must be finite and >= 0, got " + routerSkew);
        }
    }

    /** The named preset with the default seed. */
    public static SyntheticModel preset(String name) {
        SyntheticModel model = PRESETS.get(name);
        if (model == null) {
            throw new IllegalArgumentException("unknown synthetic model '" + name + "'; valid: " + String.join(", ", presetNames()));
        }
        return model;
    }

    public static List<String> presetNames() {
        return PRESETS.keySet().stream().sorted().toList();
    }

    public SyntheticModel withSeed(long newSeed) {
        return new SyntheticModel(presetName, vocabSize, embeddingLength, layerCount, feedForwardLength, headCount,
                kvHeadCount, contextLength, expertCount, expertsUsedPerToken, newSeed, routerSkew);
    }

    public SyntheticModel withRouterSkew(double newRouterSkew) {
        return new SyntheticModel(presetName, vocabSize, embeddingLength, layerCount, feedForwardLength, headCount,
                kvHeadCount, contextLength, expertCount, expertsUsedPerToken, seed, newRouterSkew);
    }

    public boolean isMoe() {
        return expertCount > 0;
    }

    public int headLength() {
        return embeddingLength / headCount;
    }

    /** n_embd_k_gqa = n_embd_v_gqa: the width of the K and V projections. */
    public int kvEmbeddingLength() {
        return headLength() * kvHeadCount;
    }

    public long parameterCount() {
        long e = embeddingLength;
        long attention = 2 * e * e + 2 * e * kvEmbeddingLength();
        long ffn = isMoe() ? e * expertCount + 3 * e * feedForwardLength * expertCount : 3 * e * feedForwardLength;
        long perLayer = attention + ffn + 2 * e;
        return 2 * e * vocabSize + e + layerCount * perLayer;
    }

    /** The routing design; only MoE models have one. */
    public RouterDesign routerDesign() {
        if (!isMoe()) {
            throw new IllegalStateException("model '" + presetName + "' is dense: it has no expert router");
        }
        return RouterDesign.zipf(vocabSize, expertCount, expertsUsedPerToken, layerCount, routerSkew);
    }

    /**
     * [layer][expert]: exact probability that a uniformly random vocabulary token selects the expert;
     * each row sums to {@link #expertsUsedPerToken()}. See {@link RouterDesign} for the design and tolerances.
     */
    public double[][] expectedExpertFrequencies() {
        return routerDesign().expectedExpertFrequencies();
    }

    public long fileSizeBytes() {
        return SyntheticGguf.writerFor(this).fileSizeBytes();
    }

    /** Writes the model as GGUF, atomically (never a partial file under {@code file}); returns {@code file}. */
    public Path writeTo(Path file, ProgressListener progress) throws IOException {
        return SyntheticGguf.writerFor(this).writeTo(file, progress);
    }

    /**
     * Where this model lives in a cache directory: named by preset, seed and a hash of the whole spec and
     * generator version, so any change of either gets a fresh file while an unchanged spec reuses it.
     */
    public Path cachedFile(Path cacheDir) {
        return cacheDir.resolve("%s-s%s-%s.gguf".formatted(presetName, Long.toUnsignedString(seed), specHash()));
    }

    /** {@link #cachedFile} after writing it if it is missing or has the wrong size (e.g. from a changed spec). */
    public Path writeToCache(Path cacheDir, ProgressListener progress) throws IOException {
        Path file = cachedFile(cacheDir);
        if (Files.isRegularFile(file) && Files.size(file) == fileSizeBytes()) {
            return file;
        }
        Files.createDirectories(cacheDir);
        return writeTo(file, progress);
    }

    /** 12 hex digits of SHA-256 over the spec and generator version. */
    public String specHash() {
        String canonical = String.join("|", "v" + GENERATOR_VERSION, presetName, Integer.toString(vocabSize),
                Integer.toString(embeddingLength), Integer.toString(layerCount), Integer.toString(feedForwardLength),
                Integer.toString(headCount), Integer.toString(kvHeadCount), Integer.toString(contextLength),
                Integer.toString(expertCount), Integer.toString(expertsUsedPerToken), Long.toHexString(seed),
                Long.toHexString(Double.doubleToLongBits(routerSkew)));
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    private static void requirePositive(String what, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
    }
}
