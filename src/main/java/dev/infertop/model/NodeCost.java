package dev.infertop.model;

/**
 * What one graph node must move and compute, exact from its shapes and types: the bytes it reads (weights in
 * their stored type, quantized blocks included, and activations) and writes, and its floating-point operations.
 * A roofline point is these over the node's wall time.
 *
 * @param weightBytes     bytes of the first source when it is a weight (MUL_MAT's src0): what decode streams
 * @param activationBytes bytes of the other sources read and of the result written
 * @param flops           2·K·M·N for a matrix product; one per output element for element-wise ops
 */
public record NodeCost(long weightBytes, long activationBytes, long flops) {
    public static final NodeCost NONE = new NodeCost(0, 0, 0);

    public long bytes() {
        return weightBytes + activationBytes;
    }

    /**
     * MUL_MAT: {@code weights} (src0, K×M per matrix, {@code weightRowBytes} per row of K values in its type)
     * times F32 activations (src1, K×N) into an F32 result (M×N), over {@code matrices} (ne2·ne3 of the result).
     *
     * @param k                values per row (src0 ne0)
     * @param m                rows of the weight (src0 ne1 = result ne0)
     * @param n                columns of the activation (src1 ne1 = result ne1): 1 per token in decode
     * @param weightMatrices   distinct weight matrices (src0 ne2·ne3; broadcast over the result's)
     * @param resultMatrices   result ne2·ne3
     * @param weightRowBytes   bytes of one src0 row of K values (ggml_row_size)
     * @param activationBytesPerValue bytes per src1 value (4 for F32)
     */
    public static NodeCost mulMat(long k, long m, long n, long weightMatrices, long resultMatrices,
                                  long weightRowBytes, long activationBytesPerValue) {
        long weights = weightRowBytes * m * weightMatrices;
        long activations = activationBytesPerValue * k * n * resultMatrices + Float.BYTES * m * n * resultMatrices;
        return new NodeCost(weights, activations, 2 * k * m * n * resultMatrices);
    }

    public NodeCost plus(NodeCost other) {
        return new NodeCost(weightBytes + other.weightBytes, activationBytes + other.activationBytes,
                flops + other.flops);
    }
}
