package dev.infertop.bpf;

import dev.infertop.process.CallSite;
import dev.infertop.process.CallSiteScanner;
import dev.infertop.process.ElfFile;
import dev.infertop.process.ElfSymbol;
import dev.infertop.process.InlinedNodeLoop;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.NodeLoopBarriers;
import dev.infertop.process.ProbePlacement;
import dev.infertop.process.ProbeSite;
import dev.infertop.process.ScanTimeLimit;
import dev.infertop.process.StrippedFunctions;
import dev.infertop.process.SymbolTable;
import dev.infertop.process.TargetException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Where a probe goes in a library (its sites), and why a required one has none: the reading half of
 * {@link ProbeSet}, which attaches. Every library read is bounded by {@link ScanTimeLimit}.
 */
final class ProbeSites {
    private ProbeSites() {}

    /**
     * Why a required probe has no site. A stripped library (no .symtab) keeps only exported functions, so
     * local ones such as ggml_graph_compute_thread are gone: name it as stripped, preferring the stripped
     * libraries that define the layer's other symbols (where the missing one would have been).
     */
    static String notFound(ProbeSpec spec, Set<Path> definingLayerSymbols, Set<Path> libraries,
                           Map<Path, MemoryMapping> mappedAs) {
        List<Path> stripped = new ArrayList<>();
        for (Path library : definingLayerSymbols.isEmpty() ? libraries : definingLayerSymbols) {
            if (isStripped(library, mappedAs)) {
                stripped.add(library);
            }
        }
        if (stripped.isEmpty() && !definingLayerSymbols.isEmpty()) {
            for (Path library : libraries) {
                if (isStripped(library, mappedAs)) {
                    stripped.add(library);
                }
            }
        }
        if (stripped.isEmpty()) {
            return describe(spec) + " not found in " + describe(libraries);
        }
        return describe(spec) + " not found in " + describe(stripped) + " (stripped: "
                + (stripped.size() == 1 ? "it has" : "they have")
                + " no .symtab; local functions are gone)";
    }

    private static boolean isStripped(Path library, Map<Path, MemoryMapping> mappedAs) {
        try {
            return ScanTimeLimit.run(library.toString(), ScanTimeLimit.limitMs(), () -> {
                try (ElfFile elf = ElfFile.open(library, mappedAs.get(library))) {
                    return elf.isStripped();
                }
            });
        } catch (TargetException e) {
            return false;
        }
    }

    /**
     * Where a layer has a {@link ProbeSpec#ONE_OF} group and none of its functions was found (nor attached
     * before), why: the layer then attaches nothing. Null when every group of the layer has a member.
     */
    static String noneOfFound(List<ProbeSpec> layerProbes, Map<ProbeSpec, ? extends Map<Path, ?>> plan,
                              Collection<? extends List<String>> attachedKeys) {
        for (List<String> group : ProbeSpec.ONE_OF) {
            List<ProbeSpec.FunctionProbe> members = layerProbes.stream()
                    .filter(ProbeSpec.FunctionProbe.class::isInstance).map(ProbeSpec.FunctionProbe.class::cast)
                    .filter(f -> group.contains(f.symbol())).toList();
            if (members.isEmpty()) {
                continue;
            }
            boolean any = members.stream().anyMatch(f -> (plan.get(f) != null && !plan.get(f).isEmpty())
                    || attachedKeys.stream().anyMatch(keys -> keys.contains(key(f))));
            if (!any) {
                return "no library exports " + String.join(" or ", group) + " (not a llama.cpp or whisper.cpp"
                        + " program, or a library too old, too new or stripped of its exports?)";
            }
        }
        return null;
    }

    /** A resolved probe address with the reason it was chosen. */
    record Site(String what, long fileOffset, String reason, String callee) {
        Site(String what, long fileOffset, String reason) {
            this(what, fileOffset, reason, "");
        }
    }

    static String key(ProbeSpec spec) {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> "fn:" + f.symbol() + ":" + f.entryProgram();
            case ProbeSpec.CallSiteProbe c -> "call:" + c.caller() + ":" + c.program();
            case ProbeSpec.TracepointProbe t -> "tp:" + t.tracepoint() + ":" + t.program();
        };
    }

    static String describe(ProbeSpec spec) {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> f.symbol();
            case ProbeSpec.CallSiteProbe c -> "calls to " + c.calleeDescription() + " in " + c.caller();
            case ProbeSpec.TracepointProbe t -> "tracepoint " + t.tracepoint();
        };
    }

    /** The probe's sites in {@code library}; none (and the reason in {@code failures}) when it cannot be read. */
    static List<Site> find(Path library, MemoryMapping mapping, ProbeSpec spec, List<String> failures) {
        try {
            return ScanTimeLimit.run(library.toString(), ScanTimeLimit.limitMs(),
                    () -> findSitesNow(library, mapping, spec));
        } catch (TargetException e) {
            failures.add(e.getMessage());
            return List.of();
        }
    }

    private static List<Site> findSitesNow(Path library, MemoryMapping mapping, ProbeSpec spec)
            throws TargetException {
        try (ElfFile elf = ElfFile.open(library, mapping)) {
            return sitesIn(elf, spec);
        }
    }

    /** The probe's sites in an opened library (SiteFinder reads every probe's from one opening). */
    static List<Site> sitesIn(ElfFile elf, ProbeSpec spec) throws TargetException {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> {
                List<ElfSymbol> candidates = f.clones() ? elf.functionAndClones(f.symbol()) : elf.functionsNamed(f.symbol());
                if (candidates.isEmpty()) {
                    candidates = StrippedFunctions.recover(elf, f.symbol()).stream().toList();
                }
                List<Site> sites = new ArrayList<>();
                if (candidates.isEmpty() && f.symbol().equals(StrippedFunctions.NODE_LOOP)) {
                    Optional<InlinedNodeLoop.Sites> inlined = InlinedNodeLoop.find(elf);
                    if (inlined.isPresent()) {
                        // No function to enter: the thread's first read of the thread count before its first node.
                        long vaddr = inlined.get().threadStartVaddr();
                        yield List.of(new Site(f.symbol() + " (inlined)", elf.fileOffsetOf(vaddr),
                                "start at " + inlined.get().function().name() + "+0x"
                                        + Long.toHexString(vaddr - inlined.get().function().vaddr()) + ": "
                                        + inlined.get().reason()));
                    }
                }
                for (ElfSymbol function : candidates) {
                    if (function.sizeBytes() > 0) {
                        ProbeSite site = ProbePlacement.place(elf, function);
                        sites.add(new Site(function.name(), site.fileOffset(), recovered(function) + site.reason()));
                        if (!f.clones()) {
                            break;
                        }
                    }
                }
                yield sites;
            }
            case ProbeSpec.CallSiteProbe c -> {
                List<Site> sites = new ArrayList<>();
                List<ElfSymbol> callers = elf.functionAndClones(c.caller());
                if (callers.isEmpty()) {
                    callers = StrippedFunctions.recover(elf, c.caller()).stream().toList();
                }
                if (callers.isEmpty() && c.caller().equals(StrippedFunctions.NODE_LOOP)) {
                    Optional<InlinedNodeLoop.Sites> inlined = InlinedNodeLoop.find(elf);
                    if (inlined.isPresent() && c.nodeLoopOnly()) {
                        // The barrier is no call: its reads of the thread count after a node and after the loop.
                        ElfSymbol into = inlined.get().function();
                        for (long vaddr : new long[] {inlined.get().inLoopVaddr(), inlined.get().afterLoopVaddr()}) {
                            sites.add(new Site("ggml_barrier (inlined) in " + into.name(), elf.fileOffsetOf(vaddr),
                                    (vaddr == inlined.get().inLoopVaddr() ? "after each node" : "after the loop")
                                            + " at " + into.name() + "+0x" + Long.toHexString(vaddr - into.vaddr())
                                            + ": " + inlined.get().reason(), "ggml_barrier"));
                        }
                        yield sites;
                    }
                    // The loop's other calls (the fused ops') are calls in the function it is inlined into.
                    callers = inlined.map(InlinedNodeLoop.Sites::function).stream().toList();
                }
                for (ElfSymbol caller : callers) {
                    if (caller.sizeBytes() == 0) {
                        continue;
                    }
                    List<CallSite> calls = new ArrayList<>(CallSiteScanner.findCallsMatching(elf, caller, c.callee()));
                    calls.sort(java.util.Comparator.comparingLong(CallSite::vaddr));
                    String chosenBy = "";
                    if (c.nodeLoopOnly()) {
                        NodeLoopBarriers.Choice choice = NodeLoopBarriers.choose(elf, caller, calls);
                        chosenBy = " (node loop's " + choice.sites().size() + " of " + calls.size() + " calls, by "
                                + choice.rule().description() + ")";
                        calls = choice.sites();
                    }
                    for (CallSite call : calls) {
                        sites.add(new Site(call.calleeName() + " call in " + caller.name(), call.fileOffset(),
                                recovered(caller) + call.reason() + chosenBy, call.calleeName()));
                    }
                }
                yield sites;
            }
            case ProbeSpec.TracepointProbe t -> List.<Site>of();
        };
    }

    /** For a function named from a stripped library's code: how it was found (the placements list says so). */
    private static String recovered(ElfSymbol function) {
        return function.table() == SymbolTable.EH_FRAME ? "stripped library: " + function.name() + " is the function "
                + "at 0x" + Long.toHexString(function.vaddr()) + " (" + function.sizeBytes() + " bytes, from .eh_frame)"
                + " that ggml_graph_compute calls and that calls ggml_barrier; " : "";
    }

    private static String describe(Collection<Path> libraries) {
        if (libraries.isEmpty()) {
            return "any library (none found to probe)";
        }
        List<String> names = libraries.stream().map(p -> p.getFileName().toString()).toList();
        return names.size() <= 4 ? String.join(", ", names) : names.subList(0, 4) + " and " + (names.size() - 4) + " more";
    }
}
