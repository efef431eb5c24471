package dev.infertop.process.layout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * enum ggml_type as the target's library names and sizes it: type number → name (ggml_type_name) and block
 * (ggml_type_size: bytes per block, ggml_blck_size: elements per block; Q4_0 stores 32 weights in 18 bytes).
 * Removed types are gaps (null): their numbers stay reserved because GGUF files store them. Sizes are empty
 * when unknown (a type the library does not size, e.g. a deprecated one).
 *
 * @param names by type number, null for a gap
 * @param sizes by type number, null where unknown; an empty list when the library was not asked
 */
public record TypeTable(List<String> names, List<BlockSize> sizes) {

    /** One block of a type: {@code bytes} hold {@code elements} values. */
    public record BlockSize(long bytes, long elements) {
        @Override
        public String toString() {
            return bytes + "/" + elements;
        }
    }

    public TypeTable {
        names = Collections.unmodifiableList(new ArrayList<>(names));
        sizes = Collections.unmodifiableList(new ArrayList<>(sizes));
    }

    /** Names only: sizes unknown. */
    public TypeTable(List<String> names) {
        this(names, List.of());
    }

    /** GGML_TYPE_COUNT of this release (gaps included). */
    public int count() {
        return names.size();
    }

    public String name(int type) {
        String name = type >= 0 && type < names.size() ? names.get(type) : null;
        return name != null ? name : "type#" + type;
    }

    public OptionalInt number(String name) {
        int type = names.indexOf(name);
        return type < 0 ? OptionalInt.empty() : OptionalInt.of(type);
    }

    public Optional<BlockSize> blockSize(int type) {
        return type >= 0 && type < sizes.size() ? Optional.ofNullable(sizes.get(type)) : Optional.empty();
    }

    /**
     * Bytes of {@code elements} values of {@code type} (ggml_row_size): whole blocks only; empty when the type's
     * size is unknown or {@code elements} is not a whole number of its blocks.
     */
    public OptionalLong bytes(int type, long elements) {
        Optional<BlockSize> block = blockSize(type);
        if (block.isEmpty() || elements < 0 || elements % block.get().elements() != 0) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Math.multiplyExact(elements / block.get().elements(), block.get().bytes()));
        } catch (ArithmeticException e) {
            return OptionalLong.empty(); // no tensor is that large: a shape read mid-update
        }
    }
}
