package dev.infertop.process.layout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads ggml's name tables (op, unary op, type) through the library's own accessors, without knowing their
 * length: GGML_OP_COUNT and friends are compile-time constants that change between releases.
 *
 * <p>ggml_op_name(op) is {@code return GGML_OP_NAME[op];} with no bounds check, and ggml_type_name only
 * assert()s in newer releases, so index N (one past the end) reads whatever the linker placed after the
 * array. Every returned pointer is therefore checked before it is read: it must point into this library's own
 * mapped, readable memory (that is where string literals live), hold a NUL within {@link #MAX_NAME_BYTES}, and
 * look like a name of that table. The first entry that fails ends the table. What follows the arrays in the
 * releases looked at (alignment padding = NULL, the next pointer table whose strings are lowercase symbols
 * like "none", C++ typeinfo pointing into libstdc++, _DYNAMIC's small tags) all fail that check; only one
 * element past the end is ever read.
 */
final class NameTableReader {
    static final int MAX_NAME_BYTES = 128;
    /** Far above any release (101 ops in v0.5.0): a table that does not end by then is not a name table. */
    static final int MAX_ENTRIES = 512;
    /**
     * Removed types leave placeholders in type_traits (4–5, 31–33, 36–38 in v0.5.0). Three in a row is the most
     * any release has; each further one would be one more read past the end of the array.
     */
    static final int MAX_CONSECUTIVE_GAPS = 3;

    /** GGML_OP_NAME and GGML_UNARY_OP_NAME entries: "NONE", "MUL_MAT", "OPT_STEP_ADAMW", "GELU_ERF". */
    static final Pattern OP_NAME = Pattern.compile("[A-Z][A-Z0-9_]*");
    /** type_traits[].type_name of a type in use: "f32", "q4_K", "iq2_xxs", "bf16", "mxfp4". */
    static final Pattern TYPE_NAME = Pattern.compile("[a-z][a-z0-9]*(_[a-zA-Z0-9]+)*");
    /** What ggml_type_name returns past the end in releases that bound it. */
    static final String TYPE_PAST_END = "NONE";

    interface Accessor {
        MemorySegment pointer(int index) throws CalibrationException;
    }

    private final LibraryMappings mappings;

    NameTableReader(LibraryMappings mappings) {
        this.mappings = mappings;
    }

    /** Op-like names, dense from 0: stops at the first entry that is not one. */
    List<String> readDense(Accessor accessor) throws CalibrationException {
        List<String> names = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < MAX_ENTRIES; i++) {
            String name = nameAt(accessor.pointer(i));
            if (name == null || !OP_NAME.matcher(name).matches() || !seen.add(name)) {
                return List.copyOf(names);
            }
            names.add(name);
        }
        return List.copyOf(names);
    }

    /**
     * Type names. Removed types keep their number with a placeholder: NULL in some releases, "DEPRECATED" or
     * free text ("TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking") in others; those become gaps
     * (null). At most {@link #MAX_CONSECUTIVE_GAPS} in a row, and trailing gaps are dropped.
     */
    List<String> readWithGaps(Accessor accessor) throws CalibrationException {
        List<String> names = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int gaps = 0;
        for (int i = 0; i < MAX_ENTRIES; i++) {
            MemorySegment pointer = accessor.pointer(i);
            String name = pointer.equals(MemorySegment.NULL) ? null : nameAt(pointer);
            boolean removed = pointer.equals(MemorySegment.NULL)
                    || (name != null && !TYPE_NAME.matcher(name).matches() && isPrintable(name));
            if (removed) {
                if (++gaps > MAX_CONSECUTIVE_GAPS) {
                    break;
                }
                names.add(null);
                continue;
            }
            if (name == null || TYPE_PAST_END.equals(name) || !seen.add(name)) {
                break;
            }
            gaps = 0;
            names.add(name);
        }
        while (!names.isEmpty() && names.getLast() == null) {
            names.removeLast();
        }
        return Collections.unmodifiableList(new ArrayList<>(names));
    }

    private static boolean isPrintable(String text) {
        return text.chars().allMatch(c -> c >= 0x20 && c < 0x7f);
    }

    /** The NUL-terminated string at {@code pointer}, or null if it is not a string inside this library. */
    private String nameAt(MemorySegment pointer) {
        long readable = mappings.readableBytesFrom(pointer.address());
        if (readable <= 0) {
            return null;
        }
        // SAFETY: the bytes lie inside a readable mapping of the library (checked just above), and the read
        // stops at the end of that mapping.
        MemorySegment bytes = pointer.reinterpret(Math.min(readable, MAX_NAME_BYTES));
        for (long i = 0; i < bytes.byteSize(); i++) {
            if (bytes.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return i == 0 ? null : new String(bytes.asSlice(0, i).toArray(ValueLayout.JAVA_BYTE),
                        StandardCharsets.US_ASCII);
            }
        }
        return null;
    }
}
