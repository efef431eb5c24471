package dev.infertop.workload;

import dev.infertop.workload.gguf.TensorData;

import java.util.function.LongPredicate;

/**
 * The weight values of a synthetic model. Random values are small and uniform so activations stay tame
 * through any depth (llama.cpp's RMS norms rescale the residual stream each layer). For MoE models the
 * weights also carry the routing design of {@link RouterDesign}: class dimensions in the embeddings,
 * zero rows that keep those dimensions untouched by attention and FFN, and a router reading only them.
 *
 * <p>Every row is drawn from its own PRNG stream keyed by (seed, tensor name, row), so the bytes depend
 * only on the spec, never on chunking or on the order tensors are generated in.
 */
final class SyntheticWeights {

    static final float WEIGHT_RANGE = 0.05f;
    static final float EMBEDDING_NOISE_RANGE = 0.05f;
    /** The embedding value in a token's own class dimension; any positive value routes identically. */
    static final float CLASS_DIMENSION_VALUE = 1.0f;
    static final double MAX_ROUTER_LOGIT = 4.0;

    private final long seed;
    private final int embeddingLength;
    private final RouterDesign router;
    private final int classCount;

    /** {@code router} is null for a dense model. */
    SyntheticWeights(long seed, int embeddingLength, RouterDesign router) {
        this.seed = seed;
        this.embeddingLength = embeddingLength;
        this.router = router;
        this.classCount = router == null ? 0 : router.classCount();
    }

    /** F16 rows of uniform values in ±{@link #WEIGHT_RANGE}. */
    TensorData uniform(String tensorName, long rowLength, long rowCount) {
        return uniform(tensorName, rowLength, rowCount, row -> false);
    }

    /**
     * F16 weights whose output rows for class dimensions are zero (a row of ggml's [n_in, n_out] is one
     * output), so the projection never writes into the dimensions the router reads.
     */
    TensorData uniformSparingClassDimensions(String tensorName, long rowLength, long rowCount) {
        return uniform(tensorName, rowLength, rowCount, row -> row % embeddingLength < classCount);
    }

    /** F32 ones: RMS norm weights that leave the normalised vector as is. */
    static TensorData ones(long length) {
        return sink -> {
            for (long i = 0; i < length; i++) {
                sink.putFloat32(1.0f);
            }
        };
    }

    /** F16 [n_embd, n_vocab]: noise, plus for MoE the token's class marker (see {@link RouterDesign}). */
    TensorData tokenEmbeddings(String tensorName, int vocabSize) {
        long tensorSeed = tensorSeed(tensorName);
        return sink -> {
            for (int token = 0; token < vocabSize; token++) {
                SplitMix64 random = new SplitMix64(SplitMix64.streamSeed(tensorSeed, token));
                int ownClass = router == null ? -1 : router.classOfToken(token);
                for (int dim = 0; dim < embeddingLength; dim++) {
                    if (dim < classCount) {
                        sink.putFloat16(dim == ownClass ? CLASS_DIMENSION_VALUE : 0f);
                    } else {
                        sink.putFloat16(random.nextSignedUnitFloat() * EMBEDDING_NOISE_RANGE);
                    }
                }
            }
        };
    }

    /**
     * F32 [n_embd, n_expert] router of one layer: from class dimension c to each expert of class c a
     * positive weight, decreasing with the expert's rank so the top-k order is fixed; zero elsewhere.
     * An RMS-normed vector has no component above sqrt(n_embd), so scaling by MAX_ROUTER_LOGIT/sqrt(n_embd)
     * bounds every logit: the softmax before top-k can never underflow chosen experts into a tie with the
     * others, whatever the width, and expert weights stay in a realistic range rather than one-hot.
     */
    TensorData router(int layer) {
        int expertCount = router.expertCount();
        float scale = (float) (MAX_ROUTER_LOGIT / Math.sqrt(embeddingLength));
        float[][] weights = new float[expertCount][embeddingLength];
        for (int c = 0; c < classCount; c++) {
            int[] experts = router.expertsForClass(layer, c);
            for (int rank = 0; rank < experts.length; rank++) {
                weights[experts[rank]][c] = (1.0f - rank / (2.0f * experts.length)) * scale;
            }
        }
        return sink -> {
            for (float[] row : weights) {
                for (float w : row) {
                    sink.putFloat32(w);
                }
            }
        };
    }

    private TensorData uniform(String tensorName, long rowLength, long rowCount, LongPredicate zeroRow) {
        long tensorSeed = tensorSeed(tensorName);
        short zero = Float.floatToFloat16(0f);
        return sink -> {
            for (long row = 0; row < rowCount; row++) {
                if (zeroRow.test(row)) {
                    for (long i = 0; i < rowLength; i++) {
                        sink.putFloat16Bits(zero);
                    }
                    continue;
                }
                SplitMix64 random = new SplitMix64(SplitMix64.streamSeed(tensorSeed, row));
                for (long i = 0; i < rowLength; i++) {
                    sink.putFloat16(random.nextSignedUnitFloat() * WEIGHT_RANGE);
                }
            }
        };
    }

    private long tensorSeed(String tensorName) {
        // String.hashCode is specified by the JLS, so it is as stable as our own PRNG.
        return SplitMix64.streamSeed(seed, tensorName.hashCode());
    }
}
