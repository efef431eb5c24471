package dev.infertop.process.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Loading target libraries into the JVM: side by side, from the right file, and failing in one line. */
class GgmlLibraryTest {

    @TempDir
    Path work;

    @Test
    void threeReleasesLoadSideBySideEachAnsweringFromItsOwnFile() throws Exception {
        List<LlamaReleases> releases = List.of(LlamaReleases.sourceBuild().require(), LlamaReleases.prebuilt().require(),
                LlamaReleases.old().require());
        List<GgmlLibrary> loaded = new ArrayList<>();
        try {
            for (LlamaReleases release : releases) {
                loaded.add(GgmlLibrary.load(release.libggmlBase()));
            }
            List<Long> addNames = new ArrayList<>();
            List<Integer> opCounts = new ArrayList<>();
            for (GgmlLibrary ggml : loaded) {
                // "NONE" comes from the .rodata of the very file loaded, not from another copy of the soname.
                MemorySegment none = ggml.opNamePointer(0);
                assertTrue(ggml.mappings().readableBytesFrom(none.address()) > 0, ggml.path() + " answered from elsewhere");
                addNames.add(none.address());
                opCounts.add(new NameTableReader(ggml.mappings()).readDense(ggml::opNamePointer).size());
            }
            assertEquals(3, addNames.stream().distinct().count(), "three separate copies: " + addNames);
            assertEquals(opCounts.get(0), opCounts.get(1), "same release");
            assertNotEquals(opCounts.get(0), opCounts.get(2), "b4234 has fewer ops than v0.5.0");
        } finally {
            loaded.forEach(GgmlLibrary::close);
        }
    }

    @Test
    void aLibraryCanBeLoadedClosedAndLoadedAgain() throws Exception {
        // v0.5.0's static initializer aborts when a previous load at the same address left its terminate
        // handler behind (see GgmlEnvironment): this crashed the test JVM before GGML_NO_BACKTRACE was set.
        Path library = LlamaReleases.sourceBuild().require().libggmlBase();
        for (int i = 0; i < 4; i++) {
            try (GgmlLibrary ggml = GgmlLibrary.load(library)) {
                assertTrue(ggml.has("ggml_init"));
            }
        }
    }

    @Test
    void aSymbolThatOnlyADependencyDefinesIsRefused() throws Exception {
        LlamaReleases release = LlamaReleases.sourceBuild().require();
        // dlsym on a handle also searches the handle's dependencies: a wrapper that merely links libggml-base
        // would "have" ggml_init. The mapping check must notice the code is not in the wrapper.
        Path ggmlDir = release.libggmlBase().getParent();
        Path wrapper = compileLibrary("libwrapper.so", "int wrapper_only(void) { return 1; }\n",
                "-Wl,--no-as-needed", "-L" + ggmlDir, "-l:libggml-base.so", "-Wl,-rpath," + ggmlDir);
        CalibrationException e = assertThrows(CalibrationException.class, () -> GgmlLibrary.load(wrapper));
        assertTrue(e.getMessage().startsWith("cannot calibrate " + wrapper + ": ggml_init at 0x"), e.getMessage());
        assertTrue(e.getMessage().contains("outside this file's code"), e.getMessage());
    }

    @Test
    void aLibraryWithoutGgmlInitIsReportedInOneLine() throws Exception {
        Path library = compileLibrary("libnotggml.so", "int not_ggml(void) { return 42; }\n");
        CalibrationException e = assertThrows(CalibrationException.class,
                () -> LayoutCalibrator.calibrateUncached(library));
        assertEquals("cannot calibrate " + library + ": it lacks ggml_init", e.getMessage());
    }

    @Test
    void aMissingFileIsReportedInOneLine() {
        Path missing = work.resolve("libggml-base.so");
        CalibrationException e = assertThrows(CalibrationException.class, () -> GgmlLibrary.load(missing));
        assertEquals("cannot calibrate " + missing + ": no such file", e.getMessage());
    }

    private Path compileLibrary(String name, String source, String... linkArguments) throws Exception {
        Path c = work.resolve(name + ".c");
        Files.writeString(c, source);
        Path library = work.resolve(name);
        List<String> command = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-o", library.toString(), c.toString()));
        command.addAll(List.of(linkArguments));
        Process gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(gcc.getInputStream().readAllBytes());
        TestRequirements.requireOrSkip(gcc.waitFor(60, TimeUnit.SECONDS) && gcc.exitValue() == 0,
                "gcc cannot build a test library: " + output);
        return library;
    }
}
