package dev.infertop.process;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The local functions the operator layer probes, found in a library stripped of its .symtab (a distribution's
 * {@code libggml-cpu-*.so} keeps only .dynsym: {@code ggml_graph_compute} and {@code ggml_barrier} are exported,
 * the node loop {@code ggml_graph_compute_thread} is not). It is recovered from the code itself:
 * {@code ggml_graph_compute} (exported, with its size) runs the loop on its own thread with a direct call, in
 * every build (the worker threads or the OpenMP region jump to it too); of the functions it calls directly, the
 * loop is the one whose range ({@link EhFrameIndex}, from the unwind tables that stripping keeps) calls
 * {@code ggml_barrier} (or, where ggml_barrier was inlined, libgomp's {@code GOMP_barrier}) at least twice: once
 * after each node and once after the loop. Exactly one such callee, or none is reported: never a guess between two.
 * Works on x86-64 and aarch64 alike ({@link CallSiteScanner} decodes both).
 */
public final class StrippedFunctions {
    /** The function recovered, under the name the probes ask for. */
    public static final String NODE_LOOP = "ggml_graph_compute_thread";
    private static final String CALLER = "ggml_graph_compute";
    private static final Set<String> BARRIERS = Set.of("ggml_barrier", "GOMP_barrier");

    private StrippedFunctions() {}

    /**
     * {@code name} recovered in {@code elf}: empty unless the file is stripped, lacks it, and the code shows it
     * as above. The symbol's table is {@link SymbolTable#EH_FRAME}.
     */
    public static Optional<ElfSymbol> recover(ElfFile elf, String name) throws TargetException {
        if (!name.equals(NODE_LOOP) || !elf.isStripped() || !elf.functionAndClones(NODE_LOOP).isEmpty()) {
            return Optional.empty();
        }
        Optional<ElfSymbol> caller = elf.function(CALLER);
        if (caller.isEmpty() || caller.get().sizeBytes() <= 0) {
            return Optional.empty();
        }
        EhFrameIndex index = EhFrameIndex.of(elf);
        if (index.ranges().isEmpty()) {
            return Optional.empty();
        }
        Set<Long> callees = new LinkedHashSet<>();
        for (CallSiteScanner.DirectCall call : CallSiteScanner.directCalls(elf, caller.get())) {
            ScanTimeLimit.checkInterrupted(elf.path());
            if (!caller.get().equals(elf.functionAt(call.targetVaddr()).orElse(null))) {
                callees.add(call.targetVaddr());
            }
        }
        List<ElfSymbol> loops = new ArrayList<>();
        for (long callee : callees) {
            ScanTimeLimit.checkInterrupted(elf.path());
            Optional<EhFrameIndex.Range> range = index.startingAt(callee);
            if (range.isEmpty() || elf.functionAt(callee).isPresent()) {
                continue; // a PLT stub or a named (exported) function: not the unnamed loop
            }
            ElfSymbol candidate = new ElfSymbol(NODE_LOOP, callee, range.get().sizeBytes(), SymbolBinding.LOCAL,
                    SymbolTable.EH_FRAME);
            try {
                if (CallSiteScanner.findCallsMatching(elf, candidate, BARRIERS::contains).size() >= 2) {
                    loops.add(candidate);
                }
            } catch (TargetException e) {
                // a callee the decoder cannot walk is not the loop this looks for
            }
        }
        return loops.size() == 1 ? Optional.of(loops.getFirst()) : Optional.empty();
    }
}
