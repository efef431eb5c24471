package dev.infertop.workload.gguf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;

/**
 * Where {@link TensorData} puts its elements: a fixed-size little-endian buffer drained into the file
 * whenever it fills, so memory stays at one chunk whatever the model size.
 */
public final class TensorSink {

    static final int CHUNK_SIZE_BYTES = 1 << 20;

    private final WritableByteChannel channel;
    private final ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK_SIZE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ProgressListener progress;
    private final long totalBytes;
    private long bytesFlushed;

    TensorSink(WritableByteChannel channel, ProgressListener progress, long totalBytes) {
        this.channel = channel;
        this.progress = progress;
        this.totalBytes = totalBytes;
    }

    /** Converts with IEEE round-to-nearest-even, the same as ggml's own F32 to F16 conversion. */
    public void putFloat16(float value) throws IOException {
        putFloat16Bits(Float.floatToFloat16(value));
    }

    public void putFloat16Bits(short bits) throws IOException {
        if (chunk.remaining() < Short.BYTES) {
            flush();
        }
        chunk.putShort(bits);
    }

    public void putFloat32(float value) throws IOException {
        if (chunk.remaining() < Float.BYTES) {
            flush();
        }
        chunk.putFloat(value);
    }

    public void putBytes(byte[] bytes) throws IOException {
        int offset = 0;
        while (offset < bytes.length) {
            if (!chunk.hasRemaining()) {
                flush();
            }
            int length = Math.min(chunk.remaining(), bytes.length - offset);
            chunk.put(bytes, offset, length);
            offset += length;
        }
    }

    void putZeros(int count) throws IOException {
        for (int i = 0; i < count; i++) {
            if (!chunk.hasRemaining()) {
                flush();
            }
            chunk.put((byte) 0);
        }
    }

    /** Bytes handed to this sink so far, flushed or not. */
    long position() {
        return bytesFlushed + chunk.position();
    }

    void flush() throws IOException {
        chunk.flip();
        while (chunk.hasRemaining()) {
            bytesFlushed += channel.write(chunk);
        }
        chunk.clear();
        progress.onProgress(bytesFlushed, totalBytes);
    }
}
