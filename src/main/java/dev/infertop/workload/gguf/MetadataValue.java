package dev.infertop.workload.gguf;

import java.util.List;
import java.util.Objects;

/** A typed GGUF metadata value. Only the types llama.cpp models need are modelled. */
public sealed interface MetadataValue {

    GgufValueType type();

    record UInt32(long value) implements MetadataValue {
        public UInt32 {
            if (value < 0 || value > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException("uint32 out of range: " + value);
            }
        }

        public GgufValueType type() { return GgufValueType.UINT32; }
    }

    record Int32(int value) implements MetadataValue {
        public GgufValueType type() { return GgufValueType.INT32; }
    }

    /** Stored as the raw 64 bits; GGUF readers interpret them as unsigned. */
    record UInt64(long value) implements MetadataValue {
        public GgufValueType type() { return GgufValueType.UINT64; }
    }

    record Float32(float value) implements MetadataValue {
        public GgufValueType type() { return GgufValueType.FLOAT32; }
    }

    record Bool(boolean value) implements MetadataValue {
        public GgufValueType type() { return GgufValueType.BOOL; }
    }

    record Str(String value) implements MetadataValue {
        public Str {
            Objects.requireNonNull(value, "string value");
        }

        public GgufValueType type() { return GgufValueType.STRING; }
    }

    record StringArray(List<String> values) implements MetadataValue {
        public StringArray {
            values = List.copyOf(values);
        }

        public GgufValueType type() { return GgufValueType.ARRAY; }
    }

    /** Arrays are cloned in and out: metadata must not change between sizing and writing. */
    record Float32Array(float[] values) implements MetadataValue {
        public Float32Array {
            values = values.clone();
        }

        @Override
        public float[] values() { return values.clone(); }

        public GgufValueType type() { return GgufValueType.ARRAY; }
    }

    record Int32Array(int[] values) implements MetadataValue {
        public Int32Array {
            values = values.clone();
        }

        @Override
        public int[] values() { return values.clone(); }

        public GgufValueType type() { return GgufValueType.ARRAY; }
    }

    static MetadataValue uint32(long value) { return new UInt32(value); }
    static MetadataValue int32(int value) { return new Int32(value); }
    static MetadataValue uint64(long value) { return new UInt64(value); }
    static MetadataValue float32(float value) { return new Float32(value); }
    static MetadataValue bool(boolean value) { return new Bool(value); }
    static MetadataValue string(String value) { return new Str(value); }
    static MetadataValue strings(List<String> values) { return new StringArray(values); }
    static MetadataValue float32s(float[] values) { return new Float32Array(values); }
    static MetadataValue int32s(int[] values) { return new Int32Array(values); }
}
