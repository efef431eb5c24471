package dev.infertop.workload.gguf;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Serialises the part of a GGUF file before the tensor data: header, metadata, tensor infos (little-endian). */
final class GgufHeaderEncoder {

    /** "GGUF" read as a little-endian uint32. */
    static final int MAGIC = 0x46554747;
    static final int VERSION = 3;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
    private final ByteBuffer scratch = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);

    static byte[] encode(Map<String, MetadataValue> metadata, List<GgufTensor> tensors, long[] dataOffsetsBytes) {
        GgufHeaderEncoder encoder = new GgufHeaderEncoder();
        encoder.u32(MAGIC);
        encoder.u32(VERSION);
        encoder.u64(tensors.size());
        encoder.u64(metadata.size());
        metadata.forEach((key, value) -> {
            encoder.string(key);
            encoder.u32(value.type().code());
            encoder.value(value);
        });
        for (int i = 0; i < tensors.size(); i++) {
            GgufTensor tensor = tensors.get(i);
            encoder.string(tensor.name());
            long[] dims = tensor.dims();
            encoder.u32(dims.length);
            for (long dim : dims) {
                encoder.u64(dim);
            }
            encoder.u32(tensor.type().code());
            encoder.u64(dataOffsetsBytes[i]);
        }
        return encoder.out.toByteArray();
    }

    private void value(MetadataValue value) {
        switch (value) {
            case MetadataValue.UInt32 v -> u32((int) v.value());
            case MetadataValue.Int32 v -> u32(v.value());
            case MetadataValue.UInt64 v -> u64(v.value());
            case MetadataValue.Float32 v -> u32(Float.floatToRawIntBits(v.value()));
            case MetadataValue.Bool v -> out.write(v.value() ? 1 : 0);
            case MetadataValue.Str v -> string(v.value());
            case MetadataValue.StringArray v -> {
                arrayHeader(GgufValueType.STRING, v.values().size());
                v.values().forEach(this::string);
            }
            case MetadataValue.Float32Array v -> {
                float[] values = v.values();
                arrayHeader(GgufValueType.FLOAT32, values.length);
                for (float f : values) {
                    u32(Float.floatToRawIntBits(f));
                }
            }
            case MetadataValue.Int32Array v -> {
                int[] values = v.values();
                arrayHeader(GgufValueType.INT32, values.length);
                for (int i : values) {
                    u32(i);
                }
            }
        }
    }

    private void arrayHeader(GgufValueType elementType, int length) {
        u32(elementType.code());
        u64(length);
    }

    private void string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        u64(utf8.length);
        out.writeBytes(utf8);
    }

    private void u32(int value) {
        scratch.clear();
        scratch.putInt(value);
        out.write(scratch.array(), 0, Integer.BYTES);
    }

    private void u64(long value) {
        scratch.clear();
        scratch.putLong(value);
        out.write(scratch.array(), 0, Long.BYTES);
    }
}
