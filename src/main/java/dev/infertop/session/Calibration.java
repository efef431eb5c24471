package dev.infertop.session;

import dev.infertop.bpf.InfertopProbes;
import dev.infertop.process.BatchLayout;
import dev.infertop.process.layout.BatchCalibrator;
import dev.infertop.process.layout.CalibratedLayout;
import dev.infertop.process.layout.CalibrationException;
import dev.infertop.process.layout.GraphLayout;
import dev.infertop.process.layout.LayoutCalibrator;
import dev.infertop.process.layout.TensorLayout;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;

/**
 * The configure stage: the target's struct layouts, read before the probes are loaded. {@code offsets} and
 * {@code layout} come from ggml (null layout, with {@code problem}, when the operator layer cannot run);
 * {@code batch} is llama_batch's layout for the token layer.
 */
record Calibration(InfertopProbes.StructOffsets offsets, CalibratedLayout layout, String problem, BatchLayout batch) {
    /**
     * Before calibration succeeds, the graph layer still reports n_nodes at its offset in every release so
     * far (`int size; int n_nodes;`); a wrong value only shows a wrong node count, never a wrong read.
     */
    private static final InfertopProbes.StructOffsets UNCALIBRATED = new InfertopProbes.StructOffsets(4, 16, 0, 0, 0,
            0, 0, 0, 0, 0, 0);

    /** Calibrates ggml's layouts, then llama_batch's (saying on {@code err} when llama.h's is used instead). */
    static Calibration of(List<Path> candidates, int targetPid, PrintStream err) {
        Calibration ggml = ggml(candidates, targetPid);
        BatchCalibrator.Result batch = BatchCalibrator.withDefaultCache().forTarget(candidates,
                OptionalInt.of(targetPid));
        batch.fallbackReason().ifPresent(why -> err.println("infertop: token layer: llama_batch read with "
                + "llama.h's layout, each batch checked (" + why + ")"));
        return new Calibration(ggml.offsets, ggml.layout, ggml.problem, batch.layout());
    }

    /**
     * Finds the target's ggml core among the candidates and calibrates struct layouts against it (cached by
     * build-id): libggml-base, or libggml in releases before ggml's backend split (b3995 and older), which had
     * no libggml-base. Without either the operator layer is unavailable; the token and graph layers run
     * regardless. Calibrating runs the library's code: in a child process as the target's user (or nobody),
     * never in this one (see LayoutCalibrator). Done whatever --layers says: the graph layer reads n_nodes at
     * the calibrated offset, and the operator layer can be switched on live.
     */
    private static Calibration ggml(List<Path> candidates, int targetPid) {
        Path base = candidates.stream()
                .filter(p -> p.getFileName().toString().startsWith("libggml-base"))
                .findFirst()
                .or(() -> candidates.stream().filter(p -> p.getFileName().toString().startsWith("libggml."))
                        .findFirst())
                .orElse(null);
        if (base == null) {
            return new Calibration(UNCALIBRATED, null, "no libggml-base (or, before the backend split, libggml) "
                    + "among the target's libraries to calibrate struct layouts against", null);
        }
        try {
            CalibratedLayout layout = LayoutCalibrator.withDefaultCache().calibrate(base, OptionalInt.of(targetPid));
            TensorLayout tensor = layout.tensor();
            GraphLayout graph = layout.graph();
            return new Calibration(new InfertopProbes.StructOffsets(graph.nodeCountOffset(), graph.nodesOffset(),
                    tensor.typeOffset(), tensor.neOffset(), tensor.opOffset(), tensor.opParamsOffset(),
                    tensor.flagsOffset(), tensor.srcOffset(), tensor.nameOffset(), tensor.dataOffset(),
                    tensor.nbOffset()), layout, "", null);
        } catch (CalibrationException e) {
            return new Calibration(UNCALIBRATED, null, e.getMessage(), null);
        }
    }

    /** What the MoE probes need to plan graphs themselves; none without a calibrated layout. */
    InfertopProbes.MoeConfig moeConfig() {
        if (layout == null || layout.ops().number("MUL_MAT_ID").isEmpty()) {
            return InfertopProbes.MoeConfig.NONE;
        }
        return new InfertopProbes.MoeConfig(layout.ops().number("MUL_MAT_ID").getAsInt(), layout.computeFlag(),
                layout.emptyOps());
    }
}
