package dev.infertop.it;

import dev.infertop.target.ElfFile;
import dev.infertop.target.ElfSymbol;
import dev.infertop.target.ProbePlacement;
import dev.infertop.target.ProbeSite;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
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
    private static final Path TRACING = Path.of("/sys/kernel/tracing");
    private static final Path UPROBE_EVENTS = TRACING.resolve("uprobe_events");
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
        if (!Files.exists(UPROBE_EVENTS)) {
            Process mount = new ProcessBuilder("mount", "-t", "tracefs", "nodev", TRACING.toString())
                    .redirectErrorStream(true).start();
            String output = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            Requirements.require(mount.waitFor() == 0 && Files.exists(UPROBE_EVENTS),
                    "needs tracefs at " + TRACING + ": " + output.strip());
        }
        removeOurEvents(); // a crashed earlier run may have left some
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
        }
        return pairs;
    }

    @Test
    void probeAfterEndbr64SeesExactlyTheCallsAnEntryProbeSees() throws Exception {
        List<Pair> pairs = pairs();
        List<String> created = new ArrayList<>();
        Map<String, Long> hits;
        try {
            for (Pair pair : pairs) {
                addProbe(pair.entryEvent(), pair.library(), pair.entryOffset());
                created.add(pair.entryEvent());
                addProbe(pair.siteEvent(), pair.library(), pair.siteOffset());
                created.add(pair.siteEvent());
            }
            Files.writeString(TRACING.resolve("events").resolve(GROUP).resolve("enable"), "1");

            Path dir = workload.prebuiltDir();
            ProcessBuilder builder = new ProcessBuilder(dir.resolve("llama-bench").toString(), "-m",
                    tinyModel.toString(), "-p", "16", "-n", "8", "-r", "1", "-t", "2")
                    .redirectErrorStream(true);
            builder.environment().putAll(workload.prebuiltEnvironment());
            Process bench = builder.start();
            String output = new String(bench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(bench.waitFor(180, TimeUnit.SECONDS), "llama-bench finished");
            assertEquals(0, bench.exitValue(), output);

            Files.writeString(TRACING.resolve("events").resolve(GROUP).resolve("enable"), "0");
            hits = readHits();
        } finally {
            cleanUp(created);
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
                assertTrue(hitsOf(hits, mulmat.entryEvent()) > 0, "mul_mat ran in the loaded variant " + variant);
                assertEquals(hitsOf(hits, mulmat.entryEvent()), hitsOf(hits, mulmat.siteEvent()),
                        "ggml_compute_forward_mul_mat in " + variant);
            }
        }
        System.out.println("uprobe hits, entry/entry+4: " + report);
        assertEquals(1, variantsWithGraphs, "exactly one CPU variant is loaded and computes graphs: " + hits);
        assertEquals(EXPECTED_DECODE_CALLS, hitsOf(hits, "decode_e"), "llama_decode calls at the entry: " + hits);
        assertEquals(EXPECTED_DECODE_CALLS, hitsOf(hits, "decode_s"), "llama_decode calls at entry+4: " + hits);
    }

    private static void addProbe(String event, Path library, long fileOffset) throws IOException {
        String line = "p:" + GROUP + "/" + event + " " + library + ":0x" + Long.toHexString(fileOffset) + "\n";
        Files.writeString(UPROBE_EVENTS, line, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }

    /** uprobe_profile: "  FILE EVENT NHIT" (newer kernels add a column), EVENT with or without its group. */
    private static Map<String, Long> readHits() throws IOException {
        Map<String, Long> hits = new HashMap<>();
        for (String line : Files.readAllLines(TRACING.resolve("uprobe_profile"))) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length < 3) {
                continue;
            }
            String event = fields[1];
            if (event.contains("/")) {
                if (!event.startsWith(GROUP + "/")) {
                    continue;
                }
                event = event.substring(GROUP.length() + 1);
            }
            hits.put(event, Long.parseLong(fields[2]));
        }
        return hits;
    }

    private static long hitsOf(Map<String, Long> hits, String event) {
        Long count = hits.get(event);
        if (count == null) {
            throw new AssertionError("no uprobe_profile line for " + event + ": " + hits);
        }
        return count;
    }

    private static List<String> ourEvents() throws IOException {
        // lines look like "p:infertop_it/decode_e /path:0x..."
        return Files.readAllLines(UPROBE_EVENTS).stream().filter(l -> l.contains(GROUP + "/"))
                .map(l -> l.substring(l.indexOf(GROUP + "/") + GROUP.length() + 1).split("\\s+")[0]).toList();
    }

    private static void removeOurEvents() throws IOException {
        List<String> stale = ourEvents();
        if (stale.isEmpty()) {
            return;
        }
        Path enable = TRACING.resolve("events").resolve(GROUP).resolve("enable");
        if (Files.exists(enable)) {
            Files.writeString(enable, "0");
        }
        for (String event : stale) {
            Files.writeString(UPROBE_EVENTS, "-:" + GROUP + "/" + event + "\n", StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
        }
    }

    /** Disables, then removes each probe this test created (never anyone else's), and checks they are gone. */
    private static void cleanUp(List<String> created) throws IOException {
        List<Throwable> failures = new ArrayList<>();
        Path enable = TRACING.resolve("events").resolve(GROUP).resolve("enable");
        if (Files.exists(enable)) {
            try {
                Files.writeString(enable, "0");
            } catch (IOException e) {
                failures.add(e);
            }
        }
        for (String event : created) {
            try {
                Files.writeString(UPROBE_EVENTS, "-:" + GROUP + "/" + event + "\n", StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                failures.add(new IOException("removing " + event + ": " + e.getMessage(), e));
            }
        }
        assertEquals(List.of(), ourEvents(), "uprobe_events still holds " + GROUP + " probes; " + failures);
        assertEquals(List.of(), failures);
    }
}
