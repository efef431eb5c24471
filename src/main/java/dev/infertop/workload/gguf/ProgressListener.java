package dev.infertop.workload.gguf;

/** Told how far a file write has got, so a CLI can draw a progress line for a model of hundreds of MiB. */
@FunctionalInterface
public interface ProgressListener {
    ProgressListener NONE = (bytesWritten, totalBytes) -> { };

    /** Called from the writing thread after each chunk reaches the file; {@code bytesWritten == totalBytes} at the end. */
    void onProgress(long bytesWritten, long totalBytes);
}
