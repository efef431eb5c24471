package dev.infertop.process.layout;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infertop.model.SafeText;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * The calibration child's answer as root reads it. The child runs the target's own library, so every byte it
 * prints is the target's choice; the bytes become text as {@code CalibrationSandbox} makes them (ISO-8859-1).
 * Any answer gives either a layout whose every field BPF will read lies inside the struct or the probe's window,
 * whose names are short printable ASCII, that passes {@link LayoutInvariants} and reads back equal from what
 * {@link LayoutAnswer#write} makes of it; or a {@link CalibrationException} of one visible, bounded line. No
 * other exception, no hang (Jazzer's per-input limit).
 */
class LayoutAnswerFuzzTest {
    static final Path LIBRARY = Path.of("/opt/llama/libggml-base.so");
    private static final String BUILD_ID = "b1d";
    /** Far above the longest message (a TensorLayout of 15 ten-digit fields, or 300 chars of an error line). */
    static final int MAX_MESSAGE_CHARS = 1000;

    @FuzzTest(maxDuration = "10s")
    void read(byte[] answer) {
        String text = new String(answer, StandardCharsets.ISO_8859_1);
        CalibratedLayout layout;
        try {
            layout = LayoutAnswer.read(text, LIBRARY, BUILD_ID);
        } catch (CalibrationException refused) {
            oneVisibleLine(refused);
            return;
        }
        if (!layout.library().equals(LIBRARY.toString()) || !BUILD_ID.equals(layout.buildId())) {
            throw new AssertionError("path or build-id taken from the child: " + layout);
        }
        try {
            LayoutInvariants.check(LIBRARY, layout);
            if (!LayoutAnswer.read(LayoutAnswer.write(layout), LIBRARY, BUILD_ID).equals(layout)) {
                throw new AssertionError("does not read back equal: " + layout);
            }
        } catch (CalibrationException e) {
            throw new AssertionError("accepted, then refused: " + e.getMessage(), e);
        }
        insideTheStruct(layout.tensor());
        insideTheWindow(layout.graph());
        names(layout.ops().opNames(), false);
        names(layout.ops().unaryOpNames(), false);
        names(layout.types().names(), true);
        if (Integer.bitCount(layout.outputFlag()) != 1 || Integer.bitCount(layout.computeFlag()) > 1) {
            throw new AssertionError("flags " + layout.outputFlag() + ", " + layout.computeFlag());
        }
        for (int op : layout.emptyOps()) {
            if (!CalibratedLayout.EMPTY_OP_NAMES.contains(layout.ops().name(op))) {
                throw new AssertionError("empty op " + op + " of " + layout.ops().count());
            }
        }
        if (layout.types().sizes().size() != layout.types().count()) {
            throw new AssertionError(layout.types().sizes().size() + " sizes for " + layout.types().count() + " types");
        }
        for (TypeTable.BlockSize size : layout.types().sizes()) {
            if (size != null && (size.bytes() < 1 || size.bytes() > 4096 || size.elements() < 1
                    || size.elements() > 1024)) {
                throw new AssertionError("block size " + size);
            }
        }
    }

    /** Each field BPF reads, as {offset, bytes}: in the struct, which is no bigger than any release's could be. */
    private static void insideTheStruct(TensorLayout t) {
        long[][] fields = {{t.typeOffset(), 4}, {t.neOffset(), 32}, {t.nbOffset(), 32}, {t.opOffset(), 4},
                {t.opParamsOffset(), t.opParamsBytes()}, {t.flagsOffset(), 4}, {t.srcOffset(), 8L * t.maxSrc()},
                {t.viewSrcOffset(), 8}, {t.viewOffsOffset(), 8}, {t.dataOffset(), 8},
                {t.nameOffset(), t.maxNameBytes()}};
        if (t.sizeBytes() > LayoutInvariants.MAX_TENSOR_BYTES) {
            throw new AssertionError("struct of " + t.sizeBytes() + " bytes");
        }
        for (long[] field : fields) {
            if (field[0] < 0 || field[1] < 1 || field[0] + field[1] > t.sizeBytes()) {
                throw new AssertionError("a field outside the struct: " + t);
            }
        }
    }

    /** The graph's counts and node pointer inside the bytes the graph probe reads. */
    private static void insideTheWindow(GraphLayout g) {
        List<Integer> counts = g.sizeOffset() == GraphLayout.UNKNOWN
                ? List.of(g.nodeCountOffset(), g.leafCountOffset())
                : List.of(g.nodeCountOffset(), g.leafCountOffset(), g.sizeOffset());
        for (int offset : counts) {
            if (offset < 0 || offset + 4 > GraphProbe.WINDOW_BYTES) {
                throw new AssertionError("a count outside the window: " + g);
            }
        }
        if (g.nodesOffset() < 0 || g.nodesOffset() + 8 > GraphProbe.WINDOW_BYTES) {
            throw new AssertionError("nodes outside the window: " + g);
        }
    }

    /** Names shown in the view and used as metric labels: short, printable ASCII without spaces. */
    private static void names(List<String> names, boolean gaps) {
        if (names.size() > NameTableReader.MAX_ENTRIES) {
            throw new AssertionError(names.size() + " names");
        }
        for (String name : names) {
            if (name == null && gaps) {
                continue;
            }
            if (name == null || name.isEmpty() || name.length() > LayoutInvariants.MAX_NAME_CHARS
                    || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new AssertionError("name '" + SafeText.of(name) + "'");
            }
        }
    }

    /** A refusal is one line naming the library, short, nothing in it that acts on a terminal. */
    static void oneVisibleLine(CalibrationException refused) {
        String message = refused.getMessage();
        if (!message.startsWith("cannot calibrate " + LIBRARY + ": ") || message.length() > MAX_MESSAGE_CHARS
                || !SafeText.isSafe(message)) {
            throw new AssertionError("not one visible line (" + message.length() + " chars): " + SafeText.of(message));
        }
    }
}
