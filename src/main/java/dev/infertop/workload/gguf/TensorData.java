package dev.infertop.workload.gguf;

import java.io.IOException;

/**
 * Produces a tensor's bytes on demand, so a writer can stream a model far larger than it would want to hold.
 * Must write exactly the tensor's size in bytes, in ggml order (ne[0] fastest).
 */
@FunctionalInterface
public interface TensorData {
    void writeTo(TensorSink sink) throws IOException;
}
