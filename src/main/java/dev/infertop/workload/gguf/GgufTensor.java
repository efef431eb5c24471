package dev.infertop.workload.gguf;

import java.util.Arrays;
import java.util.Objects;

/**
 * A tensor to write. {@code dims} are ggml's ne[], fastest-varying first, exactly as GGUF lists them
 * (so a weight applied as y = W x with x of length n_in has dims {n_in, n_out}).
 */
public record GgufTensor(String name, GgmlType type, long[] dims, TensorData data) {

    /** ggml's GGML_MAX_DIMS. */
    public static final int MAX_DIMS = 4;
    /** ggml's GGML_MAX_NAME, including the terminating NUL. */
    public static final int MAX_NAME_BYTES = 64;

    public GgufTensor {
        Objects.requireNonNull(name, "tensor name");
        Objects.requireNonNull(type, "tensor type");
        Objects.requireNonNull(data, "tensor data");
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length >= MAX_NAME_BYTES) {
            throw new IllegalArgumentException("tensor name longer than " + (MAX_NAME_BYTES - 1) + " bytes: " + name);
        }
        if (dims.length < 1 || dims.length > MAX_DIMS) {
            throw new IllegalArgumentException("tensor " + name + " has " + dims.length + " dims, expected 1.." + MAX_DIMS);
        }
        dims = dims.clone();
        for (long dim : dims) {
            if (dim <= 0) {
                throw new IllegalArgumentException("tensor " + name + " has a non-positive dimension: " + Arrays.toString(dims));
            }
        }
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    public long elementCount() {
        long count = 1;
        for (long dim : dims) {
            count = Math.multiplyExact(count, dim);
        }
        return count;
    }

    public long sizeBytes() {
        return Math.multiplyExact(elementCount(), type.elementSizeBytes());
    }
}
