package dev.infertop.workload.gguf;

/** The tensor element types this writer produces (ggml.h {@code enum ggml_type}); unquantised only. */
public enum GgmlType {
    F32(0, 4), F16(1, 2);

    private final int code;
    private final int elementSizeBytes;

    GgmlType(int code, int elementSizeBytes) {
        this.code = code;
        this.elementSizeBytes = elementSizeBytes;
    }

    public int code() {
        return code;
    }

    public int elementSizeBytes() {
        return elementSizeBytes;
    }

    public static GgmlType ofCode(int code) {
        for (GgmlType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        throw new IllegalArgumentException("unsupported ggml tensor type code " + code);
    }
}
