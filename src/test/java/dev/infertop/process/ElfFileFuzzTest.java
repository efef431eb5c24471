package dev.infertop.process;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

/**
 * A library the target controls, as bytes: decoded as the attacher decodes one (headers, symbol tables,
 * .dynamic, build-id, PLT stubs, the calls of a few functions, probe placement). Anything but a
 * {@link TargetException} is a finding, and so is a hang: Jazzer's per-input time limit catches those. Seeds
 * (gcc-built x86_64 libraries, a hand-assembled aarch64 one, and every input that once failed) are in
 * ElfFileFuzzTestInputs/decode.
 */
class ElfFileFuzzTest {
    private static final Path NAME = Path.of("fuzz.so");

    @FuzzTest(maxDuration = "10s")
    void decode(byte[] image) {
        Arena arena = Arena.ofConfined();
        ElfFile parsed;
        try {
            parsed = ElfFile.parse(NAME, arena, MemorySegment.ofArray(image));
        } catch (TargetException refused) {
            arena.close(); // the caller's to close when parsing fails
            return;
        }
        try (ElfFile elf = parsed) {
            elf.needed();
            elf.soname();
            elf.buildId();
            elf.isStripped();
            elf.functionAndClones("f");
            tolerate(() -> elf.exportsFunctions(java.util.Set.of("f", "llama_decode")));
            PltResolver plt = PltResolver.of(elf);
            plt.stubs();
            List<ElfSymbol> functions = elf.functions();
            for (int i = 0; i < Math.min(4, functions.size()); i++) {
                ElfSymbol function = functions.get(i);
                tolerate(() -> CallSiteScanner.findCalls(elf, function, "g"));
                tolerate(() -> ProbePlacement.place(elf, function));
            }
        } catch (TargetException refused) {
            // one line saying which table is bad
        }
    }

    private interface Step {
        Object run() throws TargetException;
    }

    /** One function may be refused (unknown size, undecodable bytes) while the file as a whole decodes. */
    private static void tolerate(Step step) {
        try {
            step.run();
        } catch (TargetException refused) {
            // one line for this function; the others are still tried
        }
    }
}
