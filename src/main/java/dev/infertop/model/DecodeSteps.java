package dev.infertop.model;

/**
 * Decode steps of one batch size over some span: steps that generated {@code batchTokens} tokens, one per busy
 * sequence (a server's slots), each costed whole from its graph. A step streams the model weights once whatever
 * its batch, and its attention reads each sequence's KV cells (context positions × the cache's bytes per
 * position); per generated token is the step's figure over its tokens.
 *
 * @param batchTokens      tokens each step generated (busy sequences)
 * @param steps            steps of that size
 * @param tokens           tokens they generated ({@code steps × batchTokens})
 * @param weightBytes      model weight bytes the steps read (matmul weights, norms, embedding rows)
 * @param kvBytes          KV cache bytes their attention read: context positions × bytes per position; 0 where
 *                         the positions were not read (a batch not read per sequence)
 * @param contextPositions the steps' sequences' context lengths, summed (each token's position + 1)
 * @param flops            FLOPs the steps did
 * @param wallNs           wall time of the steps' graphs
 */
public record DecodeSteps(int batchTokens, long steps, long tokens, long weightBytes, long kvBytes,
                          long contextPositions, long flops, long wallNs) {
    public double weightBytesPerStep() {
        return steps == 0 ? 0 : (double) weightBytes / steps;
    }

    public double kvBytesPerStep() {
        return steps == 0 ? 0 : (double) kvBytes / steps;
    }

    public double flopsPerStep() {
        return steps == 0 ? 0 : (double) flops / steps;
    }

    /** Weight and KV bytes over the tokens generated: what one token costs at this batch size. */
    public double bytesPerToken() {
        return tokens == 0 ? 0 : (double) (weightBytes + kvBytes) / tokens;
    }

    /** FLOPs per weight and KV byte: rises with the batch, as the weights are shared by its tokens. */
    public double flopsPerByte() {
        long bytes = weightBytes + kvBytes;
        return bytes == 0 ? Double.POSITIVE_INFINITY : (double) flops / bytes;
    }

    /** The fastest decode the memory ceiling allows at this batch size: each step streams its weights and KV once. */
    public double boundTokensPerSecond(Roofline.Ceilings ceilings) {
        double bytesPerToken = bytesPerToken();
        return bytesPerToken <= 0 ? Double.POSITIVE_INFINITY : ceilings.memoryBytesPerSecond() / bytesPerToken;
    }

    /** Tokens generated per second of the steps' graphs. */
    public double measuredTokensPerSecond() {
        return wallNs <= 0 ? 0 : tokens * 1e9 / wallNs;
    }

    /** The sum of two spans' steps of the same size. */
    public DecodeSteps plus(DecodeSteps other) {
        return new DecodeSteps(batchTokens, steps + other.steps, tokens + other.tokens, weightBytes + other.weightBytes,
                kvBytes + other.kvBytes, contextPositions + other.contextPositions, flops + other.flops,
                wallNs + other.wallNs);
    }
}
