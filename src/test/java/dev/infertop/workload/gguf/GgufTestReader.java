package dev.infertop.workload.gguf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An independent GGUF v3 reader for tests, written from the spec (gguf.h / gguf.cpp) rather than from the
 * writer, and as strict as llama.cpp about what it checks: magic, version, unique keys, the alignment key's
 * type, tensor offsets packed in order with padding, and the file ending exactly after the data.
 * Metadata values come back as Long (uint32/uint64), Integer (int32), Float, Boolean, String, or
 * List / float[] / int[] for arrays.
 */
public final class GgufTestReader {

    public record TensorInfo(String name, long[] dims, int typeCode, long offsetBytes) {
        public long elementCount() {
            long n = 1;
            for (long d : dims) {
                n *= d;
            }
            return n;
        }

        public long sizeBytes() {
            return elementCount() * GgmlType.ofCode(typeCode).elementSizeBytes();
        }
    }

    public final int version;
    public final Map<String, Object> metadata = new LinkedHashMap<>();
    public final Map<String, GgufValueType> metadataTypes = new LinkedHashMap<>();
    public final Map<String, TensorInfo> tensors = new LinkedHashMap<>();
    public final long alignmentBytes;
    public final long dataStartBytes;
    public final long fileSizeBytes;
    private final Path file;
    private final ByteBuffer buffer;

    private GgufTestReader(Path file) throws IOException {
        this.file = file;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            fileSizeBytes = channel.size();
            // The header of even the bench model is ~1 MiB; tensor data is read on demand.
            buffer = channel.map(FileChannel.MapMode.READ_ONLY, 0, fileSizeBytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        int magic = buffer.getInt();
        if (magic != 0x46554747) {
            throw new IllegalStateException("bad magic 0x" + Integer.toHexString(magic));
        }
        version = buffer.getInt();
        if (version != 3) {
            throw new IllegalStateException("unsupported version " + version);
        }
        long tensorCount = buffer.getLong();
        long kvCount = buffer.getLong();
        for (long i = 0; i < kvCount; i++) {
            String key = readString();
            GgufValueType type = GgufValueType.ofCode(buffer.getInt());
            if (metadata.containsKey(key)) {
                throw new IllegalStateException("duplicate key " + key);
            }
            metadataTypes.put(key, type);
            metadata.put(key, readValue(type));
        }
        if (metadataTypes.containsKey("general.alignment") && metadataTypes.get("general.alignment") != GgufValueType.UINT32) {
            throw new IllegalStateException("general.alignment must be uint32");
        }
        alignmentBytes = metadata.containsKey("general.alignment") ? (Long) metadata.get("general.alignment") : 32;
        for (long i = 0; i < tensorCount; i++) {
            String name = readString();
            int nDims = buffer.getInt();
            long[] dims = new long[nDims];
            for (int d = 0; d < nDims; d++) {
                dims[d] = buffer.getLong();
            }
            int type = buffer.getInt();
            long offset = buffer.getLong();
            if (tensors.put(name, new TensorInfo(name, dims, type, offset)) != null) {
                throw new IllegalStateException("duplicate tensor " + name);
            }
        }
        dataStartBytes = pad(buffer.position());
        long expectedOffset = 0;
        for (TensorInfo info : tensors.values()) {
            if (info.offsetBytes() != expectedOffset) {
                throw new IllegalStateException("tensor " + info.name() + " at offset " + info.offsetBytes() + ", expected " + expectedOffset);
            }
            expectedOffset += pad(info.sizeBytes());
        }
        if (dataStartBytes + expectedOffset != fileSizeBytes) {
            throw new IllegalStateException("file is " + fileSizeBytes + " bytes, header and data need " + (dataStartBytes + expectedOffset));
        }
        for (long p = buffer.position(); p < dataStartBytes; p++) {
            if (buffer.get((int) p) != 0) {
                throw new IllegalStateException("non-zero padding at " + p);
            }
        }
    }

    public static GgufTestReader read(Path file) throws IOException {
        return new GgufTestReader(file);
    }

    public Path file() {
        return file;
    }

    /** A little-endian view of one tensor's bytes. */
    public ByteBuffer tensorData(String name) {
        TensorInfo info = tensors.get(name);
        if (info == null) {
            throw new IllegalArgumentException("no tensor " + name);
        }
        long start = dataStartBytes + info.offsetBytes();
        return buffer.slice((int) start, (int) info.sizeBytes()).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Element {@code index} of an F16 or F32 tensor, as float. */
    public float element(String name, long index) {
        TensorInfo info = tensors.get(name);
        ByteBuffer data = tensorData(name);
        return switch (GgmlType.ofCode(info.typeCode())) {
            case F16 -> Float.float16ToFloat(data.getShort((int) (index * 2)));
            case F32 -> data.getFloat((int) (index * 4));
        };
    }

    /** The padding bytes after a tensor, which must be zero. */
    public byte[] paddingAfter(String name) {
        TensorInfo info = tensors.get(name);
        long end = dataStartBytes + info.offsetBytes() + info.sizeBytes();
        byte[] padding = new byte[(int) (pad(info.sizeBytes()) - info.sizeBytes())];
        buffer.get((int) end, padding);
        return padding;
    }

    private long pad(long n) {
        return (n + alignmentBytes - 1) / alignmentBytes * alignmentBytes;
    }

    private Object readValue(GgufValueType type) {
        return switch (type) {
            case UINT8 -> (long) Byte.toUnsignedInt(buffer.get());
            case INT8 -> (int) buffer.get();
            case UINT16 -> (long) Short.toUnsignedInt(buffer.getShort());
            case INT16 -> (int) buffer.getShort();
            case UINT32 -> Integer.toUnsignedLong(buffer.getInt());
            case INT32 -> buffer.getInt();
            case FLOAT32 -> buffer.getFloat();
            case BOOL -> {
                byte b = buffer.get();
                if (b != 0 && b != 1) {
                    throw new IllegalStateException("bool byte " + b);
                }
                yield b == 1;
            }
            case STRING -> readString();
            case UINT64 -> buffer.getLong();
            case INT64 -> buffer.getLong();
            case FLOAT64 -> buffer.getDouble();
            case ARRAY -> readArray();
        };
    }

    private Object readArray() {
        GgufValueType elementType = GgufValueType.ofCode(buffer.getInt());
        int n = Math.toIntExact(buffer.getLong());
        return switch (elementType) {
            case FLOAT32 -> {
                float[] values = new float[n];
                for (int i = 0; i < n; i++) {
                    values[i] = buffer.getFloat();
                }
                yield values;
            }
            case INT32 -> {
                int[] values = new int[n];
                for (int i = 0; i < n; i++) {
                    values[i] = buffer.getInt();
                }
                yield values;
            }
            default -> {
                List<Object> values = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    values.add(readValue(elementType));
                }
                yield values;
            }
        };
    }

    private String readString() {
        int length = Math.toIntExact(buffer.getLong());
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
