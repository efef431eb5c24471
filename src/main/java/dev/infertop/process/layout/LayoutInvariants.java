package dev.infertop.process.layout;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What every calibrated layout must satisfy before infertop hands its offsets to BPF programs: field order and
 * sizes every ggml release since 2023 has, fields inside the struct and aligned, flag words with one bit, name
 * tables of plausible names. A layout comes from code infertop does not trust (the target's own library, run in
 * a child process, or a cache file), so the root process checks it here whatever its source; the calibration
 * itself checks the tensor part too, to fail early with the same words.
 */
final class LayoutInvariants {
    private LayoutInvariants() {}

    /** Bytes of struct ggml_tensor any release can have: ~336 in v0.5.0. */
    static final int MIN_TENSOR_BYTES = 64;
    static final int MAX_TENSOR_BYTES = 4096;
    /** Longest op or type name taken from a table (the calibration reads at most this many bytes). */
    static final int MAX_NAME_CHARS = NameTableReader.MAX_NAME_BYTES - 1;

    static void check(Path library, CalibratedLayout layout) throws CalibrationException {
        checkTensor(library, layout.tensor());
        checkGraph(library, layout.graph());
        checkFlags(library, layout.outputFlag(), layout.computeFlag());
        checkOps(library, layout.ops());
        checkTypes(library, layout.types());
    }

    static void checkTensor(Path library, TensorLayout t) throws CalibrationException {
        boolean sized = t.sizeBytes() >= MIN_TENSOR_BYTES && t.sizeBytes() <= MAX_TENSOR_BYTES;
        boolean inside = sized && fits(t.typeOffset(), 4, 4, t) && fits(t.neOffset(), 32, 8, t)
                && fits(t.nbOffset(), 32, 8, t) && fits(t.opOffset(), 4, 4, t)
                && fits(t.opParamsOffset(), t.opParamsBytes(), 4, t) && fits(t.flagsOffset(), 4, 4, t)
                && fits(t.srcOffset(), 8L * t.maxSrc(), 8, t) && fits(t.viewSrcOffset(), 8, 8, t)
                && fits(t.viewOffsOffset(), 8, 8, t) && fits(t.dataOffset(), 8, 8, t)
                && fits(t.nameOffset(), t.maxNameBytes(), 1, t);
        boolean ordered = t.neOffset() + 32 == t.nbOffset() && t.nbOffset() + 32 <= t.opOffset()
                && t.opOffset() < t.opParamsOffset() && t.opParamsOffset() + t.opParamsBytes() == t.flagsOffset()
                && t.flagsOffset() < t.srcOffset() && t.srcOffset() + 8 * t.maxSrc() == t.viewSrcOffset()
                && t.viewSrcOffset() + 8 == t.viewOffsOffset() && t.viewOffsOffset() < t.dataOffset()
                && t.dataOffset() < t.nameOffset();
        boolean plausible = t.maxSrc() >= 2 && t.maxSrc() <= 32 && t.opParamsBytes() >= 16
                && t.opParamsBytes() <= 256 && t.maxNameBytes() >= 16 && t.maxNameBytes() < TensorProbe.LONG_NAME_CHARS;
        if (!inside || !ordered || !plausible) {
            throw CalibrationException.of(library, "calibrated ggml_tensor layout is implausible: " + t);
        }
    }

    /** {@code bytes} at {@code offset}, aligned to {@code alignment}, inside the struct. */
    private static boolean fits(int offset, long bytes, int alignment, TensorLayout t) {
        return offset >= 0 && bytes > 0 && offset % alignment == 0 && offset + bytes <= t.sizeBytes();
    }

    static void checkGraph(Path library, GraphLayout g) throws CalibrationException {
        int window = GraphProbe.WINDOW_BYTES;
        boolean counts = intField(g.nodeCountOffset(), window) && intField(g.leafCountOffset(), window)
                && g.nodeCountOffset() != g.leafCountOffset();
        boolean size = g.sizeOffset() == GraphLayout.UNKNOWN || (intField(g.sizeOffset(), window)
                && g.sizeOffset() != g.nodeCountOffset() && g.sizeOffset() != g.leafCountOffset());
        boolean nodes = g.nodesOffset() >= 0 && g.nodesOffset() % 8 == 0 && g.nodesOffset() + 8 <= window
                && !overlaps(g.nodesOffset(), g.nodeCountOffset()) && !overlaps(g.nodesOffset(), g.leafCountOffset())
                && (g.sizeOffset() == GraphLayout.UNKNOWN || !overlaps(g.nodesOffset(), g.sizeOffset()));
        if (!counts || !size || !nodes) {
            throw CalibrationException.of(library, "calibrated ggml_cgraph layout is implausible: " + g);
        }
    }

    private static boolean intField(int offset, int window) {
        return offset >= 0 && offset % 4 == 0 && offset + 4 <= window;
    }

    /** Whether the 8-byte pointer at {@code pointer} covers the int32 at {@code int32}. */
    private static boolean overlaps(int pointer, int int32) {
        return int32 + 4 > pointer && int32 < pointer + 8;
    }

    static void checkFlags(Path library, int outputFlag, int computeFlag) throws CalibrationException {
        boolean output = Integer.bitCount(outputFlag) == 1;
        boolean compute = computeFlag == 0 || (Integer.bitCount(computeFlag) == 1 && computeFlag != outputFlag);
        if (!output || !compute) {
            throw CalibrationException.of(library, "calibrated tensor flags are implausible: output 0x"
                    + Integer.toHexString(outputFlag) + ", compute 0x" + Integer.toHexString(computeFlag));
        }
    }

    static void checkOps(Path library, OpTable ops) throws CalibrationException {
        names(library, "op", ops.opNames(), NameTableReader.OP_NAME, false);
        names(library, "unary op", ops.unaryOpNames(), NameTableReader.OP_NAME, false);
        if (ops.number("ADD").isEmpty() || ops.number("MUL_MAT").isEmpty()) {
            throw CalibrationException.of(library, "ggml_op_name yields no ADD/MUL_MAT");
        }
    }

    static void checkTypes(Path library, TypeTable types) throws CalibrationException {
        names(library, "type", types.names(), NameTableReader.TYPE_NAME, true);
        for (String needed : List.of("f32", "f16", "i32")) {
            if (types.number(needed).isEmpty()) {
                throw CalibrationException.of(library, "its ggml_type_name table has no type '" + needed + "'");
            }
        }
        int gaps = 0;
        for (String name : types.names()) {
            gaps = name == null ? gaps + 1 : 0;
            if (gaps > NameTableReader.MAX_CONSECUTIVE_GAPS) {
                throw CalibrationException.of(library, "its type table has more than "
                        + NameTableReader.MAX_CONSECUTIVE_GAPS + " removed types in a row");
            }
        }
        checkBlockSizes(library, types);
    }

    /**
     * Block sizes, when known: one per type, a gap has none, each plausible (a block of at most 1024 values in at
     * most 4 KiB, as many bytes as a quantized block needs at the least), and the plain types exact: f32 is 4
     * bytes per value and f16 2, facts of the GGUF format, so an answer that says otherwise is not believed.
     */
    static void checkBlockSizes(Path library, TypeTable types) throws CalibrationException {
        if (types.sizes().isEmpty()) {
            return;
        }
        if (types.sizes().size() != types.count()) {
            throw CalibrationException.of(library, "its type sizes do not match its type table");
        }
        for (int type = 0; type < types.count(); type++) {
            TypeTable.BlockSize size = types.sizes().get(type);
            if (size == null) {
                continue;
            }
            if (types.names().get(type) == null || size.elements() < 1 || size.elements() > 1024 || size.bytes() < 1
                    || size.bytes() > 4096 || size.bytes() * 8 < size.elements()) {
                throw CalibrationException.of(library, "type " + type + " has an implausible block size " + size);
            }
        }
        for (var exact : List.of(new Object[] {"f32", 4L}, new Object[] {"f16", 2L})) {
            int type = types.number((String) exact[0]).orElseThrow();
            var size = types.blockSize(type);
            if (size.isPresent() && !size.get().equals(new TypeTable.BlockSize((Long) exact[1], 1))) {
                throw CalibrationException.of(library, exact[0] + " has block size " + size.get());
            }
        }
    }

    private static void names(Path library, String table, List<String> names, Pattern pattern, boolean gapsAllowed)
            throws CalibrationException {
        if (names.size() > NameTableReader.MAX_ENTRIES) {
            throw CalibrationException.of(library, "its " + table + " table has " + names.size() + " entries");
        }
        Set<String> seen = new HashSet<>();
        for (String name : names) {
            if (name == null && gapsAllowed) {
                continue;
            }
            if (name == null || name.length() > MAX_NAME_CHARS || !pattern.matcher(name).matches() || !seen.add(name)) {
                throw CalibrationException.of(library, "its " + table + " table holds an implausible or repeated "
                        + "name" + (name == null ? "" : " (" + name.length() + " chars)"));
            }
        }
    }
}
