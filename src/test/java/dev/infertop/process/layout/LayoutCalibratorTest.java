package dev.infertop.process.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Calibrated offsets against the C headers of each release (compiled with gcc), and across releases. */
class LayoutCalibratorTest {

    @TempDir
    Path work;

    @Test
    void sourceBuildOffsetsEqualItsHeader() throws Exception {
        LlamaReleases release = LlamaReleases.sourceBuild().require();
        assertMatchesHeader(release, LayoutCalibrator.calibrateUncached(release.libggmlBase()));
    }

    @Test
    void prebuiltOffsetsEqualItsHeaderAndTheSourceBuild() throws Exception {
        LlamaReleases prebuilt = LlamaReleases.prebuilt().require();
        LlamaReleases source = LlamaReleases.sourceBuild().require();
        CalibratedLayout fromPrebuilt = LayoutCalibrator.calibrateUncached(prebuilt.libggmlBase());
        CalibratedLayout fromSource = LayoutCalibrator.calibrateUncached(source.libggmlBase());
        assertMatchesHeader(prebuilt, fromPrebuilt);
        assertNotEquals(fromSource.buildId(), fromPrebuilt.buildId(), "two different builds");
        assertEquals(fromSource.tensor(), fromPrebuilt.tensor());
        assertEquals(fromSource.graph(), fromPrebuilt.graph());
        assertEquals(fromSource.ops(), fromPrebuilt.ops());
        assertEquals(fromSource.types(), fromPrebuilt.types());
    }

    @Test
    void oldReleaseOffsetsEqualItsOwnHeader() throws Exception {
        LlamaReleases release = LlamaReleases.old().require();
        assertMatchesHeader(release, LayoutCalibrator.calibrateUncached(release.libggmlBase()));
    }

    @Test
    void preSplitReleaseWithAnotherTensorLayoutEqualsItsOwnHeader() throws Exception {
        LlamaReleases release = LlamaReleases.preSplit().require();
        CalibratedLayout layout = LayoutCalibrator.calibrateUncached(release.libggmlBase());
        assertMatchesHeader(release, layout);
        CalibratedLayout current = LayoutCalibrator.calibrateUncached(LlamaReleases.sourceBuild().require().libggmlBase());
        assertNotEquals(current.tensor().srcOffset(), layout.tensor().srcOffset(), "b3995 still has ggml_tensor.grad");
        assertNotEquals(current.tensor().nameOffset(), layout.tensor().nameOffset());
    }

    @Test
    void opTablesComeFromEachLibraryAndDifferBetweenReleases() throws Exception {
        CalibratedLayout current = LayoutCalibrator.calibrateUncached(LlamaReleases.sourceBuild().require().libggmlBase());
        CalibratedLayout old = LayoutCalibrator.calibrateUncached(LlamaReleases.old().require().libggmlBase());
        for (CalibratedLayout layout : List.of(current, old)) {
            assertEquals("NONE", layout.ops().name(0));
            assertTrue(layout.ops().number("ADD").isPresent(), "ADD");
            assertTrue(layout.ops().number("MUL_MAT").isPresent(), "MUL_MAT");
            assertTrue(layout.ops().unaryOpNames().contains("SILU"), "SILU among " + layout.ops().unaryOpNames());
            assertEquals("f32", layout.types().name(0));
            assertEquals("f16", layout.types().name(1));
        }
        System.out.printf("ops: v0.5.0 %d, b4234 %d; unary ops: %d, %d; types: %d, %d%n",
                current.ops().count(), old.ops().count(), current.ops().unaryOpNames().size(),
                old.ops().unaryOpNames().size(), current.types().count(), old.types().count());
        assertNotEquals(current.ops().count(), old.ops().count(), "ops were added between b4234 and v0.5.0");
    }

    @Test
    void computeFlagIsFoundWhereTheReleaseHasOne() throws Exception {
        CalibratedLayout current = LayoutCalibrator.calibrateUncached(LlamaReleases.sourceBuild().require().libggmlBase());
        CalibratedLayout old = LayoutCalibrator.calibrateUncached(LlamaReleases.old().require().libggmlBase());
        assertEquals(HeaderFacts.of(LlamaReleases.sourceBuild(), work).get("GGML_TENSOR_FLAG_COMPUTE"), current.computeFlag());
        assertTrue(current.hasComputeFlag());
        assertEquals(0, old.computeFlag(), "b4234 computes every node and has no COMPUTE flag");
        assertTrue(!HeaderFacts.of(LlamaReleases.old(), work).has("GGML_TENSOR_FLAG_COMPUTE"));
    }

    /**
     * Block sizes from each library's ggml_type_size/ggml_blck_size against its own C headers: sizeof(block_…)
     * and QK… of ggml-common.h, printed by a program compiled here. f32/f16 are 4/1 and 2/1 in every release.
     */
    @Test
    void blockSizesOfEachReleaseEqualItsHeaders() throws Exception {
        for (LlamaReleases release : List.of(LlamaReleases.sourceBuild(), LlamaReleases.old(), LlamaReleases.preSplit())) {
            release.require();
            TypeTable types = LayoutCalibrator.calibrateUncached(release.libggmlBase()).types();
            java.nio.file.Path program = work.resolve("blocks.c");
            java.nio.file.Files.writeString(program, """
                    #define GGML_COMMON_DECL_C
                    #include <stdint.h>
                    #include <stdio.h>
                    #include "ggml.h"
                    #include "ggml-common.h"
                    int main(void) {
                        printf("q4_0 %zu/%d\\nq8_0 %zu/%d\\nq4_K %zu/%d\\nq6_K %zu/%d\\n", sizeof(block_q4_0), QK4_0,
                               sizeof(block_q8_0), QK8_0, sizeof(block_q4_K), QK_K, sizeof(block_q6_K), QK_K);
                        return 0;
                    }
                    """);
            java.nio.file.Path binary = work.resolve("blocks");
            Process cc = new ProcessBuilder("cc", "-I", release.source().resolve("ggml/include").toString(), "-I",
                    release.source().resolve("ggml/src").toString(), program.toString(), "-o", binary.toString())
                    .redirectErrorStream(true).start();
            String ccOutput = new String(cc.getInputStream().readAllBytes());
            assertEquals(0, cc.waitFor(), release + ": " + ccOutput);
            Process run = new ProcessBuilder(binary.toString()).start();
            List<String> lines = new String(run.getInputStream().readAllBytes()).lines().toList();
            assertEquals(4, lines.size(), release + ": " + lines);
            for (String line : lines) {
                String[] nameAndSize = line.split(" ");
                int type = types.number(nameAndSize[0]).orElseThrow();
                assertEquals(nameAndSize[1], types.blockSize(type).orElseThrow().toString(), release + " " + line);
            }
            assertEquals("4/1", types.blockSize(types.number("f32").orElseThrow()).orElseThrow().toString());
            assertEquals("2/1", types.blockSize(types.number("f16").orElseThrow()).orElseThrow().toString());
            // 4096 Q4_0 weights of a row: 128 blocks of 18 bytes.
            assertEquals(128 * 18, types.bytes(types.number("q4_0").orElseThrow(), 4096).orElseThrow(), release.name());
        }
    }

    private void assertMatchesHeader(LlamaReleases release, CalibratedLayout layout) throws Exception {
        HeaderFacts h = HeaderFacts.of(release, work);
        TensorLayout t = layout.tensor();
        String in = " in " + release;
        assertEquals(h.get("ggml_tensor.type"), t.typeOffset(), "type" + in);
        assertEquals(h.get("ggml_tensor.ne"), t.neOffset(), "ne" + in);
        assertEquals(h.get("ggml_tensor.nb"), t.nbOffset(), "nb" + in);
        assertEquals(h.get("ggml_tensor.op"), t.opOffset(), "op" + in);
        assertEquals(h.get("ggml_tensor.op_params"), t.opParamsOffset(), "op_params" + in);
        assertEquals(h.get("GGML_MAX_OP_PARAMS"), t.opParamsBytes(), "GGML_MAX_OP_PARAMS" + in);
        assertEquals(h.get("ggml_tensor.flags"), t.flagsOffset(), "flags" + in);
        assertEquals(h.get("ggml_tensor.src"), t.srcOffset(), "src" + in);
        assertEquals(h.get("GGML_MAX_SRC"), t.maxSrc(), "GGML_MAX_SRC" + in);
        assertEquals(h.get("ggml_tensor.view_src"), t.viewSrcOffset(), "view_src" + in);
        assertEquals(h.get("ggml_tensor.view_offs"), t.viewOffsOffset(), "view_offs" + in);
        assertEquals(h.get("ggml_tensor.data"), t.dataOffset(), "data" + in);
        assertEquals(h.get("ggml_tensor.name"), t.nameOffset(), "name" + in);
        assertEquals(h.get("GGML_MAX_NAME"), t.maxNameBytes(), "GGML_MAX_NAME" + in);
        assertEquals(h.get("sizeof(struct ggml_tensor)"), t.sizeBytes(), "sizeof" + in);
        if (h.has("ggml_cgraph.nodes")) {
            GraphLayout g = layout.graph();
            assertEquals(h.get("ggml_cgraph.size"), g.sizeOffset(), "cgraph.size" + in);
            assertEquals(h.get("ggml_cgraph.n_nodes"), g.nodeCountOffset(), "cgraph.n_nodes" + in);
            assertEquals(h.get("ggml_cgraph.n_leafs"), g.leafCountOffset(), "cgraph.n_leafs" + in);
            assertEquals(h.get("ggml_cgraph.nodes"), g.nodesOffset(), "cgraph.nodes" + in);
        } else {
            // ggml-impl.h did not compile: GraphProbe already cross-checked n_nodes and nodes against
            // ggml_graph_n_nodes / ggml_graph_node; require that the release has them.
            try (GgmlLibrary ggml = GgmlLibrary.load(release.libggmlBase())) {
                assertTrue(ggml.has("ggml_graph_n_nodes") && ggml.has("ggml_graph_node"), "graph API" + in);
            }
        }
        assertEquals(h.get("GGML_OP_COUNT"), layout.ops().count(), "GGML_OP_COUNT" + in);
        assertEquals(h.get("GGML_UNARY_OP_COUNT"), layout.ops().unaryOpNames().size(), "GGML_UNARY_OP_COUNT" + in);
        assertEquals(h.get("GGML_TYPE_COUNT"), layout.types().count(), "GGML_TYPE_COUNT" + in);
        assertEquals(h.get("GGML_OP_ADD"), layout.ops().number("ADD").getAsInt(), "GGML_OP_ADD" + in);
        assertEquals(h.get("GGML_OP_MUL_MAT"), layout.ops().number("MUL_MAT").getAsInt(), "GGML_OP_MUL_MAT" + in);
        assertEquals(h.get("GGML_TYPE_F16"), layout.types().number("f16").getAsInt(), "GGML_TYPE_F16" + in);
        assertEquals(h.get("GGML_TENSOR_FLAG_OUTPUT"), layout.outputFlag(), "GGML_TENSOR_FLAG_OUTPUT" + in);
        assertEquals(List.of(h.get("GGML_OP_NONE"), h.get("GGML_OP_RESHAPE"), h.get("GGML_OP_VIEW"),
                        h.get("GGML_OP_PERMUTE"), h.get("GGML_OP_TRANSPOSE")),
                layout.emptyOps().stream().map(Integer::longValue).toList(), "empty ops" + in);
        System.out.println(release + ": " + layout.tensor() + " " + layout.graph() + " ops=" + layout.ops().count()
                + " types=" + layout.types().count() + " computeFlag=" + layout.computeFlag()
                + " emptyOps=" + layout.emptyOps());
    }
}
