package dev.infertop.process.layout;

/**
 * Byte offsets of the fields of struct ggml_tensor that BPF programs read, as calibrated against one
 * libggml-base (ggml/include/ggml.h of its release). Arrays are given by the offset of element 0 and their
 * length: {@code ne} is 4 × int64, {@code nb} 4 × size_t, {@code src} {@code maxSrc} pointers, {@code name}
 * {@code maxNameBytes} chars (NUL included), {@code op_params} {@code opParamsBytes} bytes.
 *
 * @param sizeBytes sizeof(struct ggml_tensor): ggml_tensor_overhead() minus ggml's object header where the
 *                  release has that function, else the distance between two tensors of a no_alloc context
 *                  minus the header (then rounded up to GGML_MEM_ALIGN)
 */
public record TensorLayout(
        int typeOffset,
        int neOffset,
        int nbOffset,
        int opOffset,
        int opParamsOffset,
        int opParamsBytes,
        int flagsOffset,
        int srcOffset,
        int maxSrc,
        int viewSrcOffset,
        int viewOffsOffset,
        int dataOffset,
        int nameOffset,
        int maxNameBytes,
        int sizeBytes) {

    public static final int DIMS = 4;

    /** Offset of src[i]. */
    public int srcOffset(int i) {
        if (i < 0 || i >= maxSrc) {
            throw new IndexOutOfBoundsException("src[" + i + "] of " + maxSrc);
        }
        return srcOffset + 8 * i;
    }
}
