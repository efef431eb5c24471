package dev.infertop.it;

import dev.infertop.process.ElfFile;
import dev.infertop.process.ElfSymbol;
import dev.infertop.process.ProbePlacement;
import dev.infertop.process.ProbeSite;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cheap placement is safe: a probe at entry + 4 (past endbr64, on the prologue's push) fires exactly as
 * often as a probe on the entry itself. The oracle is independent of infertop: tracefs uprobes, whose hit
 * counts the kernel reports in uprobe_profile, on the prebuilt npm libraries (every function starts with
 * endbr64 there), while the prebuilt llama-bench runs.
 *
 * <p>{@code llama-bench -p 16 -n 8 -r 1}: pp16 = warm-up + 1 rep = 2 llama_decode calls; tg8 = 1 warm-up
 * call + 8 = 9; 11 in all.
 */
class ProbePlacementSafetyIT {
    private static final String GROUP = "infertop_it";
    private static final long EXPECTED_DECODE_CALLS = 2 + 9;

    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    /** One function in one library, probed twice: at the entry and at infertop's site. */
    private record Pair(String key, Path library, String function, long entryOffset, long siteOffset) {
        String entryEvent() {
            return key + "_e";
        }

        String siteEvent() {
            return key + "_s";
        }
    }

    @BeforeAll
    static void requirements() throws Exception {
        Requirements.requireRoot();
        workload = Requirements.llamaCpp();
        tinyModel = Models.preset("tiny");
        Tracefs.require();
    }

    private static Pair pair(String key, Path library, String function) throws Exception {
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSymbol symbol = elf.function(function)
                    .orElseThrow(() -> new AssertionError(function + " not in " + library));
            ProbeSite site = ProbePlacement.place(elf, symbol);
            assertEquals(4, site.offsetFromEntry(), "prebuilt " + function + " starts with endbr64 + push: "
                    + site.reason() + " in " + library);
            return new Pair(key, library, function, elf.fileOffsetOf(symbol.vaddr()), site.fileOffset());
        }
    }

    private static List<Pair> pairs() throws Exception {
        Path dir = workload.prebuiltDir();
        List<Pair> pairs = new ArrayList<>();
        pairs.add(pair("decode", dir.resolve("libllama.v0.5.0.so"), "llama_decode"));
        List<Path> variants;
        try (Stream<Path> files = Files.list(dir)) {
            variants = files.filter(p -> p.getFileName().toString().matches("libggml-cpu-[a-z0-9]+\\.so")).sorted()
                    .toList();
        }
        assertTrue(variants.size() > 1, "CPU variants in " + dir + ": " + variants);
        for (Path variant : variants) {
            String name = variant.getFileName().toString().replaceAll("^libggml-cpu-|\\.so$", "");
            pairs.add(pair("graph_" + name, variant, "ggml_graph_compute"));
            pairs.add(pair("mulmat_" + name, variant, "ggml_compute_forward_mul_mat"));
            // On a CPU with AMX the weight matmuls run in the AMX buffer type's kernel instead (see
            // OperatorFidelityIT.AMX_MUL_MAT): probed the same way where a variant has it.
            try (ElfFile elf = ElfFile.open(variant)) {
                if (elf.function(OperatorFidelityIT.AMX_MUL_MAT).isPresent()) {
                    pairs.add(pair("amxmm_" + name, variant, OperatorFidelityIT.AMX_MUL_MAT));
                }
            }
        }
        return pairs;
    }

    @Test
    void probeAfterEndbr64SeesExactlyTheCallsAnEntryProbeSees() throws Exception {
        List<Pair> pairs = pairs();
        Map<String, Long> hits;
        try (Tracefs tracefs = Tracefs.group(GROUP)) {
            for (Pair pair : pairs) {
                tracefs.addProbe(pair.entryEvent(), pair.library(), pair.entryOffset());
                tracefs.addProbe(pair.siteEvent(), pair.library(), pair.siteOffset());
            }
            tracefs.enable();

            Path dir = workload.prebuiltDir();
            ProcessBuilder builder = new ProcessBuilder(dir.resolve("llama-bench").toString(), "-m",
                    tinyModel.toString(), "-p", "16", "-n", "8", "-r", "1", "-t", "2")
                    .redirectErrorStream(true);
            builder.environment().putAll(workload.prebuiltEnvironment());
            Process bench = builder.start();
            String output = new String(bench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(bench.waitFor(180, TimeUnit.SECONDS), "llama-bench finished");
            assertEquals(0, bench.exitValue(), output);

            tracefs.disable();
            hits = tracefs.hits();
        }

        Map<String, String> report = new LinkedHashMap<>();
        int variantsWithGraphs = 0;
        for (Pair pair : pairs) {
            long atEntry = hitsOf(hits, pair.entryEvent());
            long atSite = hitsOf(hits, pair.siteEvent());
            report.put(pair.key(), atEntry + "/" + atSite);
            assertEquals(atEntry, atSite, pair.function() + " in " + pair.library().getFileName()
                    + ": entry vs entry+4 hits; all: " + report);
            if (pair.key().startsWith("graph_") && atEntry > 0) {
                variantsWithGraphs++;
                String variant = pair.key().substring("graph_".length());
                Pair mulmat = pairs.stream().filter(p -> p.key().equals("mulmat_" + variant)).findFirst().orElseThrow();
                long amx = pairs.stream().filter(p -> p.key().equals("amxmm_" + variant))
                        .mapToLong(p -> hitsOf(hits, p.entryEvent())).sum();
                assertTrue(hitsOf(hits, mulmat.entryEvent()) + amx > 0, "mul_mat ran in the loaded variant " + variant);
                assertEquals(hitsOf(hits, mulmat.entryEvent()), hitsOf(hits, mulmat.siteEvent()),
                        "ggml_compute_forward_mul_mat in " + variant);
            }
        }
        System.out.println("uprobe hits, entry/entry+4: " + report);
        assertEquals(1, variantsWithGraphs, "exactly one CPU variant is loaded and computes graphs: " + hits);
        assertEquals(EXPECTED_DECODE_CALLS, hitsOf(hits, "decode_e"), "llama_decode calls at the entry: " + hits);
        assertEquals(EXPECTED_DECODE_CALLS, hitsOf(hits, "decode_s"), "llama_decode calls at entry+4: " + hits);
    }

    private static long hitsOf(Map<String, Long> hits, String event) {
        return Tracefs.hitsOf(hits, event);
    }
}
