package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Objects told apart by the functions they define, whatever their names. */
class GgmlCodeFinderTest {
    @TempDir
    Path dir;

    /** ggml's core and llama.cpp linked into an addon named like none of llama.cpp's libraries, with host imports. */
    private static final String ADDON = """
            extern int napi_create_object(void *env, void **result);
            int ggml_init(void) { return 1; }
            int ggml_free(void) { return 2; }
            int ggml_op_name(void) { return 3; }
            int ggml_type_name(void) { return 4; }
            int ggml_new_tensor_1d(void) { return 5; }
            int ggml_new_graph(void) { return 6; }
            int ggml_build_forward_expand(void) { return 7; }
            int ggml_mul_mat(void) { return 8; }
            int ggml_graph_compute(void) { return 9; }
            int llama_decode(void) { return 10; }
            int addon_init(void *env) { void *o; return napi_create_object(env, &o); }
            """;

    /** A CPU backend's shape: ggml functions, but not ggml's core. */
    private static final String BACKEND = """
            int ggml_graph_compute(void) { return 1; }
            int ggml_barrier(void) { return 2; }
            """;

    /** Names that only look like ggml's, and ggml imported: no ggml code of its own. */
    private static final String LOOKALIKE = """
            extern int ggml_init(void);
            int my_ggml_init(void) { return ggml_init(); }
            int ggmlx_free(void) { return 1; }
            int llamas(void) { return 2; }
            int ggml_table = 3;
            """;

    /** A program with llama.cpp's functions in .symtab only (local, not exported). */
    private static final String PROGRAM = """
            __attribute__((noinline)) static int ggml_graph_compute(int x) { return x * 3; }
            __attribute__((noinline)) static int llama_decode(int x) { return ggml_graph_compute(x) + 1; }
            int main(int argc, char **argv) { (void) argv; return llama_decode(argc); }
            """;

    @Test
    void anAddonOfAnyNameHoldingGgmlsCoreIsFoundByWhatItDefines() throws Exception {
        GgmlCodeFinder.Finding addon = GgmlCodeFinder.examine(compile("index.node", ADDON, true), null);
        assertNull(addon.failure());
        assertTrue(addon.holdsCode());
        assertTrue(addon.ggmlCore(), "defines every core function: " + addon);
        assertEquals(9, addon.ggmlFunctions());
        assertEquals(1, addon.llamaFunctions());
        assertEquals("index.node (9 ggml_*, 1 llama_*)", addon.summary());

        GgmlCodeFinder.Finding backend = GgmlCodeFinder.examine(compile("libbackend.so", BACKEND, true), null);
        assertTrue(backend.holdsCode());
        assertFalse(backend.ggmlCore(), "no ggml_init: not the object to calibrate against");
    }

    @Test
    void importsAndLookalikeNamesAreNoGgmlCode() throws Exception {
        GgmlCodeFinder.Finding lookalike = GgmlCodeFinder.examine(compile("libggml-like.so", LOOKALIKE, true), null);
        assertNull(lookalike.failure());
        assertFalse(lookalike.holdsCode(), "an import, a data symbol and lookalike names: " + lookalike);
        assertEquals("libggml-like.so (none)", lookalike.summary());
        Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
        if (Files.exists(libc)) {
            assertFalse(GgmlCodeFinder.holdsCode(libc), "libc, by its content");
        }
    }

    @Test
    void symtabIsReadWhenDynsymHasNoneAndAStrippedCopyHoldsNothing() throws Exception {
        Path program = compile("app", PROGRAM, false);
        GgmlCodeFinder.Finding found = GgmlCodeFinder.examine(program, null);
        assertTrue(found.holdsCode(), "local functions of .symtab: " + found);
        assertEquals(1, found.ggmlFunctions());
        assertEquals(1, found.llamaFunctions());
        Path stripped = TestTools.strippedCopy(program, dir);
        assertFalse(GgmlCodeFinder.holdsCode(stripped), "no name left to tell");
    }

    /** ggml linked in with hidden symbols: its assertion format string stays in .rodata, no name does. */
    private static final String HIDDEN = """
            #include <stdio.h>
            __attribute__((noinline, visibility("hidden"))) void ggml_abort(const char *file, int line,
                    const char *fmt, const char *x) { fprintf(stderr, fmt, x); fprintf(stderr, "%s:%d", file, line); }
            __attribute__((noinline, visibility("hidden"))) int ggml_graph_compute(int x) {
                if (x < 0) ggml_abort(__FILE__, __LINE__, "GGML_ASSERT(%s) failed", "x >= 0");
                return x * 3;
            }
            int main(int argc, char **argv) { (void) argv; return ggml_graph_compute(argc); }
            """;

    @Test
    void aStrippedObjectWithHiddenGgmlIsToldByItsStringsNotFoundByName() throws Exception {
        Path stripped = TestTools.strippedCopy(compile("app-hidden", HIDDEN, false), dir);
        assertFalse(GgmlCodeFinder.holdsCode(stripped), "no name: nothing to probe");
        assertTrue(GgmlCodeFinder.holdsAnonymousGgml(stripped), "ggml's assertion string in its .rodata");
        Path plain = TestTools.strippedCopy(compile("plain", PROGRAM.replace("ggml_", "f_").replace("llama_", "g_"),
                false), dir);
        assertFalse(GgmlCodeFinder.holdsAnonymousGgml(plain), "a program without ggml's strings");
        assertFalse(GgmlCodeFinder.holdsAnonymousGgml(dir.resolve("absent")), "an absent file holds nothing");
        assertFalse(GgmlCodeFinder.holdsAnonymousGgml(Path.of("relative")), "not a file's path");
    }

    @Test
    void aFileRewrittenInPlaceIsReadAgain() throws Exception {
        Path addon = compile("index.node", ADDON, true);
        assertTrue(GgmlCodeFinder.holdsCode(addon));
        Path lookalike = compile("other.so", LOOKALIKE, true);
        Files.write(addon, Files.readAllBytes(lookalike)); // the same inode, new bytes (and a new ctime)
        assertFalse(GgmlCodeFinder.holdsCode(addon), "what it holds now, not what it held");
    }

    @Test
    void aFileThatIsNoElfIsAFailureNotAnException() throws Exception {
        Path garbage = Files.write(dir.resolve("libggml-garbage.so"), new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
        GgmlCodeFinder.Finding finding = GgmlCodeFinder.examine(garbage, null);
        assertNotNull(finding.failure());
        assertFalse(finding.holdsCode());
        assertEquals("libggml-garbage.so (unreadable)", finding.summary());
        assertFalse(GgmlCodeFinder.holdsCode(dir.resolve("missing.so")));
    }

    @Test
    void namesAreReadInPlaceAndCappedOnADecodedOpeningToo() throws Exception {
        Path addon = compile("index.node", ADDON, true);
        try (ElfFile full = ElfFile.open(addon); ElfFile headers = ElfFile.openHeaders(addon)) {
            for (ElfFile elf : new ElfFile[] {full, headers}) {
                assertEquals(Set.of("llama_decode"), elf.definedFunctionsStartingWith(java.util.List.of("llama_"), 10));
                assertEquals(3, elf.definedFunctionsStartingWith(java.util.List.of("ggml_", "llama_"), 3).size());
                assertTrue(elf.definedFunctionsStartingWith(java.util.List.of("napi_"), 10).isEmpty(),
                        "an import is not defined here");
            }
        }
    }

    private Path compile(String name, String source, boolean shared) throws Exception {
        Path c = dir.resolve(name + ".c");
        Files.writeString(c, source);
        Path out = dir.resolve(name);
        if (shared) {
            TestTools.run("gcc", "-O1", "-shared", "-fPIC", "-Wl,--allow-shlib-undefined", "-o", out.toString(),
                    c.toString());
        } else {
            TestTools.run("gcc", "-O1", "-o", out.toString(), c.toString());
        }
        return out;
    }
}
