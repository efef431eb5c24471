package dev.infertop.workload.gguf;

/** Metadata value type codes of the GGUF format (gguf.h {@code enum gguf_type}). */
public enum GgufValueType {
    UINT8(0), INT8(1), UINT16(2), INT16(3), UINT32(4), INT32(5), FLOAT32(6), BOOL(7),
    STRING(8), ARRAY(9), UINT64(10), INT64(11), FLOAT64(12);

    private final int code;

    GgufValueType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static GgufValueType ofCode(int code) {
        for (GgufValueType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown GGUF value type code " + code);
    }
}
