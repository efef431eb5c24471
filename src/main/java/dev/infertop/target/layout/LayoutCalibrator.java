package dev.infertop.target.layout;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds struct ggml_tensor / struct ggml_cgraph offsets and ggml's op and type tables for one libggml-base, by
 * running that library's own code in this JVM on a tiny context (see {@link TensorProbe}, {@link GraphProbe},
 * {@link NameTableReader}). Nothing here is a per-release table: a release that moves a field is calibrated
 * the same way. Results are cached per build ({@link LayoutCache}), so a repeated attach loads nothing.
 */
public final class LayoutCalibrator {
    private final LayoutCache cache;

    /** Calibrates through {@code cache}. */
    public LayoutCalibrator(LayoutCache cache) {
        this.cache = cache;
    }

    public static LayoutCalibrator withDefaultCache() {
        return new LayoutCalibrator(LayoutCache.defaultLocation());
    }

    /** The layout of {@code libggmlBase}: from the cache when this exact file was calibrated before. */
    public CalibratedLayout calibrate(Path libggmlBase) throws CalibrationException {
        LibraryIdentity identity = LibraryIdentity.of(libggmlBase);
        Optional<CalibratedLayout> cached = cache.lookup(identity);
        if (cached.isPresent()) {
            return cached.get();
        }
        CalibratedLayout layout = calibrateUncached(libggmlBase, identity.buildId());
        try {
            cache.store(identity, layout);
        } catch (IOException e) {
            // The layout is right; only the next attach will be slower. Not worth failing this one.
            System.err.println("infertop: cannot cache the layout of " + libggmlBase + " in " + cache.directory()
                    + ": " + e.getMessage());
        }
        return layout;
    }

    /** Always loads and probes the library; no cache involved. */
    public static CalibratedLayout calibrateUncached(Path libggmlBase) throws CalibrationException {
        return calibrateUncached(libggmlBase, LibraryIdentity.of(libggmlBase).buildId());
    }

    private static CalibratedLayout calibrateUncached(Path libggmlBase, String buildId) throws CalibrationException {
        try (GgmlLibrary ggml = GgmlLibrary.load(libggmlBase)) {
            NameTableReader names = new NameTableReader(ggml.mappings());
            OpTable ops = new OpTable(names.readDense(ggml::opNamePointer),
                    ggml.hasUnaryOpNames() ? names.readDense(ggml::unaryOpNamePointer) : List.of());
            TypeTable types = new TypeTable(names.readWithGaps(ggml::typeNamePointer));
            if (ops.number("ADD").isEmpty() || ops.number("MUL_MAT").isEmpty()) {
                throw CalibrationException.of(libggmlBase, "ggml_op_name yields no ADD/MUL_MAT: " + ops.opNames());
            }
            TensorProbe.Result tensor = TensorProbe.calibrate(ggml, ops, types);
            int f32 = types.number("f32").orElseThrow();
            GraphProbe.Result graph = GraphProbe.calibrate(ggml, tensor.layout(), f32);
            return new CalibratedLayout(libggmlBase.toString(), buildId, tensor.layout(), graph.layout(), ops, types,
                    tensor.outputFlag(), graph.computeFlag(), emptyOps(ops));
        }
    }

    /** The ops whose nodes only re-describe memory, by name: their numbers differ between releases. */
    private static List<Integer> emptyOps(OpTable ops) {
        List<Integer> numbers = new ArrayList<>();
        for (String name : CalibratedLayout.EMPTY_OP_NAMES) {
            ops.number(name).ifPresent(numbers::add);
        }
        return numbers;
    }
}
