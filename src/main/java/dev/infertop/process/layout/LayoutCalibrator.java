package dev.infertop.process.layout;

import dev.infertop.process.AttachPatience;
import dev.infertop.process.ContentHashCache;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Finds struct ggml_tensor / struct ggml_cgraph offsets and ggml's op and type tables for one libggml-base, by
 * running that library's own code on a tiny context (see {@link TensorProbe}, {@link GraphProbe},
 * {@link NameTableReader}). Nothing here is a per-release table: a release that moves a field is calibrated
 * the same way.
 *
 * <p>The library's code never runs in infertop's own (root) process: it runs in {@link CalibrationChild}, a
 * short-lived unprivileged process ({@link CalibrationSandbox}), whose text answer is parsed and checked
 * against {@link LayoutInvariants} here. Results are cached per build ({@link LayoutCache}), so the child is
 * started once per build, not once per attach.
 */
public final class LayoutCalibrator {
    private final LayoutCache cache;
    private final Duration childTimeLimit;

    /** Calibrates through {@code cache}. */
    public LayoutCalibrator(LayoutCache cache) {
        this(cache, AttachPatience.scaled(CalibrationSandbox.TIME_LIMIT));
    }

    LayoutCalibrator(LayoutCache cache, Duration childTimeLimit) {
        this.cache = cache;
        this.childTimeLimit = childTimeLimit;
    }

    public static LayoutCalibrator withDefaultCache() {
        return new LayoutCalibrator(LayoutCache.defaultLocation());
    }

    /**
     * The layout of {@code libggmlBase} as the process {@code targetPid} maps it (empty: no process, e.g. a
     * command not started yet): from the cache when this exact file was calibrated before, else from a
     * calibration child running as that process's user (as nobody if it is root or there is none).
     */
    public CalibratedLayout calibrate(Path libggmlBase, OptionalInt targetPid) throws CalibrationException {
        try (LibraryFile file = LibraryFile.open(libggmlBase, targetPid)) {
            LibraryIdentity identity = LibraryIdentity.of(file, new ContentHashCache(cache.directory(), note -> { }));
            Optional<CalibratedLayout> cached = cache.lookup(identity);
            if (cached.isPresent()) {
                return cached.get();
            }
            ChildCredentials credentials = ChildCredentials.forTarget(targetPid);
            String answer = CalibrationSandbox.run(file, credentials, childTimeLimit, List.of(), List.of(), targetPid);
            CalibratedLayout layout = LayoutAnswer.read(answer, libggmlBase, identity.buildId());
            try {
                cache.store(identity, layout);
            } catch (IOException e) {
                // The layout is right; only the next attach will be slower. Not worth failing this one.
                System.err.println("infertop: cannot cache the layout of " + libggmlBase + " in " + cache.directory()
                        + ": " + e.getMessage());
            }
            return layout;
        }
    }

    /** {@link #calibrate(Path, OptionalInt)} with no process: the child runs as nobody. */
    public CalibratedLayout calibrate(Path libggmlBase) throws CalibrationException {
        return calibrate(libggmlBase, OptionalInt.empty());
    }

    /** Loads and probes the library IN THIS PROCESS, no cache: for tests of the calibration itself. */
    static CalibratedLayout calibrateUncached(Path libggmlBase) throws CalibrationException {
        return calibrateInThisProcess(libggmlBase, LibraryIdentity.of(libggmlBase).buildId());
    }

    /**
     * Runs the library's code in this process, with this process's rights: only {@link CalibrationChild} (and
     * tests on provisioned builds) call it, which is why it is not public.
     */
    static CalibratedLayout calibrateInThisProcess(Path libggmlBase, String buildId) throws CalibrationException {
        try (GgmlLibrary ggml = GgmlLibrary.load(libggmlBase)) {
            NameTableReader names = new NameTableReader(ggml.mappings());
            OpTable ops = new OpTable(names.readDense(ggml::opNamePointer),
                    ggml.hasUnaryOpNames() ? names.readDense(ggml::unaryOpNamePointer) : List.of());
            List<String> typeNames = names.readWithGaps(ggml::typeNamePointer);
            List<TypeTable.BlockSize> sizes = new ArrayList<>();
            for (int type = 0; type < typeNames.size(); type++) {
                // Named types only: a removed type's number may index past the library's table.
                sizes.add(typeNames.get(type) == null ? null : ggml.blockSize(type).orElse(null));
            }
            TypeTable types = new TypeTable(typeNames, sizes);
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
    static List<Integer> emptyOps(OpTable ops) {
        List<Integer> numbers = new ArrayList<>();
        for (String name : CalibratedLayout.EMPTY_OP_NAMES) {
            ops.number(name).ifPresent(numbers::add);
        }
        return numbers;
    }
}
