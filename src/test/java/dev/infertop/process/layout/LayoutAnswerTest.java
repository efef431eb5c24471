package dev.infertop.process.layout;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The calibration child's answer as the root process reads it: a real layout survives the round trip; anything
 * malformed, oversized, or breaking an invariant is refused with one line naming the library.
 */
class LayoutAnswerTest {
    static final Path LIBRARY = Path.of("/opt/llama/libggml-base.so");

    /** struct ggml_tensor / ggml_cgraph of llama.cpp v0.5.0 (ggml.h, ggml-impl.h) and a shortened op table. */
    static CalibratedLayout v050() {
        TensorLayout tensor = new TensorLayout(0, 16, 48, 80, 84, 64, 148, 152, 10, 232, 240, 248, 256, 64, 336);
        GraphLayout graph = new GraphLayout(0, 4, 8, 16);
        OpTable ops = new OpTable(List.of("NONE", "DUP", "ADD", "MUL", "MUL_MAT", "MUL_MAT_ID", "RESHAPE", "VIEW",
                "PERMUTE", "TRANSPOSE", "UNARY"), List.of("ABS", "SILU", "GELU_ERF"));
        List<String> typeNames = new ArrayList<>(List.of("f32", "f16", "q4_0", "q4_1"));
        typeNames.add(null);
        typeNames.add(null);
        typeNames.addAll(List.of("q5_0", "q8_0", "i8", "i16", "i32"));
        List<TypeTable.BlockSize> sizes = new ArrayList<>(List.of(new TypeTable.BlockSize(4, 1),
                new TypeTable.BlockSize(2, 1), new TypeTable.BlockSize(18, 32), new TypeTable.BlockSize(20, 32)));
        sizes.add(null);
        sizes.add(null);
        sizes.addAll(List.of(new TypeTable.BlockSize(22, 32), new TypeTable.BlockSize(34, 32),
                new TypeTable.BlockSize(1, 1), new TypeTable.BlockSize(2, 1), new TypeTable.BlockSize(4, 1)));
        TypeTable types = new TypeTable(typeNames, sizes);
        return new CalibratedLayout(LIBRARY.toString(), "abc123", tensor, graph, ops, types, 2, 16,
                LayoutCalibrator.emptyOps(ops));
    }

    @Test
    void aLayoutReadsBackEqualWithTheReadersOwnPathAndBuildId() throws Exception {
        CalibratedLayout layout = v050();
        String text = LayoutAnswer.write(layout);
        assertTrue(text.startsWith("infertop-layout 2\ntensor type=0 ne=16 nb=48 op=80 op_params=84"), text);
        assertTrue(text.contains("\ntypes f32 f16 q4_0 q4_1 - - q5_0 q8_0 i8 i16 i32\n"
                + "typesizes 4/1 2/1 18/32 20/32 - - 22/32 34/32 1/1 2/1 4/1\n"), text);
        assertEquals(layout, LayoutAnswer.read(text, LIBRARY, "abc123"));

        CalibratedLayout renamed = LayoutAnswer.read(text, Path.of("/elsewhere/libggml-base.so"), "def456");
        assertEquals("/elsewhere/libggml-base.so", renamed.library());
        assertEquals("def456", renamed.buildId());
        assertEquals(List.of(0, 6, 7, 8, 9), renamed.emptyOps(), "NONE RESHAPE VIEW PERMUTE TRANSPOSE, by name");
    }

    @Test
    void anErrorAnswerBecomesOneLineNamingTheLibrary() {
        CalibrationException e = assertThrows(CalibrationException.class, () -> LayoutAnswer.read(
                "error dlopen failed (libhostile.so: cannot open shared object file)\n\u001b]0;pwned\u0007more\n",
                LIBRARY, null));
        assertEquals("cannot calibrate /opt/llama/libggml-base.so: dlopen failed (libhostile.so: cannot open shared "
                + "object file)", e.getMessage());
        String written = LayoutAnswer.error("bad\nname \u001b[31m\u0000");
        assertEquals("error bad name ?[31m?\n", written, "the child's own line is flattened too");
        String longReason = "x".repeat(10_000);
        String message = assertThrows(CalibrationException.class,
                () -> LayoutAnswer.read("error " + longReason, LIBRARY, null)).getMessage();
        assertTrue(message.length() < LayoutAnswer.MAX_ERROR_CHARS + 100, "bounded: " + message.length());
    }

    @Test
    void malformedAnswersAreRefused() {
        String good = LayoutAnswer.write(v050());
        List<String> bad = List.of(
                "",
                "garbage",
                good.replace("infertop-layout 2", "infertop-layout 1"),
                good.replace("typesizes 4/1 2/1", "typesizes 4/1"),
                good.replace("typesizes 4/1 2/1", "typesizes 8/1 2/1"),
                good.replace(" 18/32 ", " 18/0 "),
                good.replace(" 18/32 ", " 18/-32 "),
                good.replace(" 18/32 ", " 999999/32 "),
                good.replace("20/32 - -", "20/32 - 4/1"),
                good.replace("end\n", ""),
                good + "end\n",
                good.replace("graph ", "graf "),
                good.replace(" nb=48", " nb=0x30"),
                good.replace(" nb=48", " nb=48 nb=48"),
                good.replace(" nb=48", ""),
                good.replace(" op=80", " op=99999999999"),
                good.replace(" op=80", " OP=80"),
                good.replace("ops NONE", "ops  NONE"),
                good.replace("ops NONE", "ops NONE\u001b"),
                good.replace("ops NONE", "ops NONE\u00e9"),
                good.replace("\n", "\r\n"));
        for (String text : bad) {
            CalibrationException e = assertThrows(CalibrationException.class, () -> LayoutAnswer.read(text, LIBRARY, null),
                    () -> "accepted: " + text);
            assertTrue(e.getMessage().startsWith("cannot calibrate " + LIBRARY + ": "), e.getMessage());
            assertTrue(e.getMessage().lines().count() == 1, e.getMessage());
        }
    }

    @Test
    void anOversizedAnswerIsRefusedBeforeParsing() {
        String huge = LayoutAnswer.write(v050()).replace("ops NONE", "ops NONE" + " A".repeat(LayoutAnswer.MAX_BYTES));
        String message = assertThrows(CalibrationException.class, () -> LayoutAnswer.read(huge, LIBRARY, null))
                .getMessage();
        assertTrue(message.contains("over " + LayoutAnswer.MAX_BYTES + " bytes"), message);
    }

    @Test
    void wellFormedButImplausibleLayoutsAreRefusedByTheInvariants() {
        List<UnaryOperator<String>> edits = List.of(
                t -> t.replace(" size=336", " size=5000"),           // struct bigger than any release
                t -> t.replace(" name=256", " name=300"),            // name runs past the struct's end
                t -> t.replace(" nb=48", " nb=40"),                  // nb must follow ne's 4 int64
                t -> t.replace(" data=248", " data=250"),            // misaligned pointer
                t -> t.replace(" type=0", " type=-8"),               // negative offset
                t -> t.replace(" max_src=10", " max_src=9"),         // src[] must end where view_src starts
                t -> t.replace(" max_name=64", " max_name=8"),       // GGML_MAX_NAME far too small
                t -> t.replace(" n_nodes=4", " n_nodes=8"),          // n_nodes and n_leafs at one offset
                t -> t.replace(" nodes=16", " nodes=4"),             // the nodes pointer over n_nodes
                t -> t.replace(" nodes=16", " nodes=128"),           // outside the struct window
                t -> t.replace("output=2", "output=3"),              // a flag is one bit
                t -> t.replace("compute=16", "compute=2"),           // compute is not the output bit
                t -> t.replace(" MUL_MAT ", " MUL_MAD "),            // no MUL_MAT op
                t -> t.replace(" DUP ", " ADD "),                    // a repeated op name
                t -> t.replace(" DUP ", " dup "),                    // not an op name
                t -> t.replace(" DUP ", " D" + "U".repeat(200) + " "),  // too long
                t -> t.replace(" i32", ""),                          // no i32 type
                t -> t.replace(" - - ", " - - - - "),                // more gaps in a row than any release
                t -> t.replace("ops NONE", "ops NONE" + manyNames(NameTableReader.MAX_ENTRIES + 1)));
        String good = LayoutAnswer.write(v050());
        for (UnaryOperator<String> edit : edits) {
            String text = edit.apply(good);
            assertTrue(!text.equals(good), "the edit changed something: " + text);
            CalibrationException e = assertThrows(CalibrationException.class, () -> LayoutAnswer.read(text, LIBRARY, null),
                    () -> "accepted: " + text);
            assertTrue(e.getMessage().startsWith("cannot calibrate " + LIBRARY + ": "), e.getMessage());
        }
    }

    private static String manyNames(int count) {
        StringBuilder names = new StringBuilder();
        for (int i = 0; i < count; i++) {
            names.append(" OP").append(i);
        }
        return names.toString();
    }

    @Test
    void theInvariantsHoldForTheFixtureAndTheCacheChecksThemToo() throws Exception {
        LayoutInvariants.check(LIBRARY, v050());
        CalibratedLayout layout = v050();
        CalibratedLayout noComputeFlag = new CalibratedLayout(layout.library(), layout.buildId(), layout.tensor(),
                layout.graph(), layout.ops(), layout.types(), layout.outputFlag(), 0, layout.emptyOps());
        LayoutInvariants.check(LIBRARY, noComputeFlag); // releases before GGML_TENSOR_FLAG_COMPUTE
        CalibratedLayout noSizeField = new CalibratedLayout(layout.library(), layout.buildId(), layout.tensor(),
                new GraphLayout(GraphLayout.UNKNOWN, 4, 8, 16), layout.ops(), layout.types(), layout.outputFlag(), 0,
                layout.emptyOps());
        LayoutInvariants.check(LIBRARY, noSizeField); // releases without ggml_new_graph_custom
        CalibratedLayout onlyF32 = new CalibratedLayout(layout.library(), layout.buildId(), layout.tensor(),
                layout.graph(), layout.ops(), new TypeTable(Collections.nCopies(1, "f32")), layout.outputFlag(), 0,
                layout.emptyOps());
        assertThrows(CalibrationException.class, () -> LayoutInvariants.check(LIBRARY, onlyF32), "no f16/i32");
    }
}
