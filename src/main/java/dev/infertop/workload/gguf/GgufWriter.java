package dev.infertop.workload.gguf;

import dev.infertop.io.OutputFiles;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Writes a GGUF v3 file: metadata and tensor infos first, then each tensor's data, every tensor starting
 * at a multiple of the alignment from the start of the data section (which llama.cpp checks exactly:
 * tensors must be packed in declaration order with padding between them).
 *
 * <p>Tensor bytes are pulled from {@link TensorData} one chunk at a time, so memory stays small.
 * The file appears atomically: data goes to a fresh {@code .NAME.RANDOM.tmp} next to the target (created with
 * O_EXCL and O_NOFOLLOW: infertop runs as root, and a link planted at a predictable {@code NAME.tmp} would have
 * had it truncate any file), which is renamed over the target only once complete; a target name that is a
 * link is refused. On any failure the temp file is deleted, so a reader never finds a half-written model
 * under the final name.
 */
public final class GgufWriter {

    public static final int DEFAULT_ALIGNMENT_BYTES = 32;
    public static final String ALIGNMENT_KEY = "general.alignment";

    private final int alignmentBytes;
    private final Map<String, MetadataValue> metadata = new LinkedHashMap<>();
    private final List<GgufTensor> tensors = new ArrayList<>();
    private final Set<String> tensorNames = new LinkedHashSet<>();

    public GgufWriter() {
        this(DEFAULT_ALIGNMENT_BYTES);
    }

    /** Records the alignment as {@code general.alignment}, the key readers use to find it. */
    public GgufWriter(int alignmentBytes) {
        if (alignmentBytes <= 0 || Integer.bitCount(alignmentBytes) != 1) {
            throw new IllegalArgumentException("GGUF alignment must be a power of two, got " + alignmentBytes);
        }
        this.alignmentBytes = alignmentBytes;
        metadata.put(ALIGNMENT_KEY, MetadataValue.uint32(alignmentBytes));
    }

    public GgufWriter put(String key, MetadataValue value) {
        Objects.requireNonNull(key, "metadata key");
        Objects.requireNonNull(value, "metadata value for " + key);
        if (key.equals(ALIGNMENT_KEY)) {
            throw new IllegalArgumentException(ALIGNMENT_KEY + " is set through the GgufWriter constructor");
        }
        if (metadata.putIfAbsent(key, value) != null) {
            throw new IllegalArgumentException("duplicate metadata key " + key);
        }
        return this;
    }

    public GgufWriter add(GgufTensor tensor) {
        if (!tensorNames.add(tensor.name())) {
            throw new IllegalArgumentException("duplicate tensor name " + tensor.name());
        }
        tensors.add(tensor);
        return this;
    }

    public int alignmentBytes() {
        return alignmentBytes;
    }

    public List<GgufTensor> tensors() {
        return List.copyOf(tensors);
    }

    /** The exact size of the file {@link #writeTo} produces. */
    public long fileSizeBytes() {
        return layout().fileSizeBytes();
    }

    /**
     * Writes the file at {@code file} atomically (see class comment) and returns it.
     *
     * @throws IOException if the file cannot be written; no file is left at {@code file} or its temp path
     */
    public Path writeTo(Path file, ProgressListener progress) throws IOException {
        Objects.requireNonNull(progress, "progress listener");
        Layout layout = layout();
        if (file.getFileName() == null) {
            throw new IllegalArgumentException("not a file path: " + file);
        }
        OutputFiles.refuseLink(file);
        Path temp = OutputFiles.freshSibling(file);
        boolean complete = false;
        try {
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                TensorSink sink = new TensorSink(channel, progress, layout.fileSizeBytes());
                sink.putBytes(layout.header());
                sink.putZeros(padding(layout.header().length));
                long dataStart = sink.position();
                for (int i = 0; i < tensors.size(); i++) {
                    GgufTensor tensor = tensors.get(i);
                    long start = sink.position();
                    tensor.data().writeTo(sink);
                    long written = sink.position() - start;
                    if (written != tensor.sizeBytes()) {
                        throw new IllegalStateException("tensor " + tensor.name() + " produced " + written
                                + " bytes, expected " + tensor.sizeBytes());
                    }
                    sink.putZeros(padding(written));
                    assert sink.position() - dataStart == layout.dataOffsetsBytes()[i] + padded(tensor.sizeBytes());
                }
                sink.flush();
                if (sink.position() != layout.fileSizeBytes()) {
                    throw new IllegalStateException("wrote " + sink.position() + " bytes, expected " + layout.fileSizeBytes());
                }
                // Without this, a crash soon after the rename could leave a complete-looking name over partial data.
                channel.force(true);
            }
            OutputFiles.moveOver(temp, file);
            complete = true;
            return file;
        } finally {
            if (!complete) {
                Files.deleteIfExists(temp);
            }
        }
    }

    private Layout layout() {
        long[] offsets = new long[tensors.size()];
        long dataSizeBytes = 0;
        for (int i = 0; i < tensors.size(); i++) {
            offsets[i] = dataSizeBytes;
            dataSizeBytes = Math.addExact(dataSizeBytes, padded(tensors.get(i).sizeBytes()));
        }
        byte[] header = GgufHeaderEncoder.encode(metadata, tensors, offsets);
        return new Layout(header, offsets, padded(header.length) + dataSizeBytes);
    }

    private long padded(long sizeBytes) {
        return (sizeBytes + alignmentBytes - 1) & -(long) alignmentBytes;
    }

    private int padding(long sizeBytes) {
        return (int) (padded(sizeBytes) - sizeBytes);
    }

    private record Layout(byte[] header, long[] dataOffsetsBytes, long fileSizeBytes) { }
}
