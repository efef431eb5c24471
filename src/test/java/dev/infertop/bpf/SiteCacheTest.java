package dev.infertop.bpf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.bpf.ProbeSites.Site;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Probe sites cached per library content: the same sites as a fresh scan, read back from the file on the next
 * attach, and a corrupt, foreign or tampered file ignored with a line that names it.
 */
class SiteCacheTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path BUILD = Path.of(System.getProperty("user.home"),
            ".cache/infertop/llama.cpp-node-3.22.1/build/bin");

    @TempDir
    Path work;

    @Test
    void cachedSitesAreTheSitesOfAFreshScanAndAreReadBackFromTheFile() throws Exception {
        Path cpu = copyOf("libggml-cpu.so");
        Path llama = copyOf("libllama.so");
        Path cacheDir = work.resolve("layouts");
        List<String> notes = new ArrayList<>();

        SiteFinder cold = SiteFinder.cachedIn(cacheDir, notes::add);
        cold.prefetch(List.of(cpu, llama), -1); // no such process: the files are read unchecked
        int found = 0;
        for (Path library : List.of(cpu, llama)) {
            for (ProbeSpec spec : librarySpecs()) {
                List<Site> fresh = ProbeSites.find(library, null, spec, new ArrayList<>());
                assertEquals(fresh, cold.find(library, null, spec, new ArrayList<>()), spec + " in " + library);
                found += fresh.size();
            }
            assertTrue(Files.isRegularFile(cacheDir.resolve(sha256(library) + ".sites.json")), "entry for " + library);
        }
        assertTrue(found >= 4, "the build defines the probed functions: " + found + " sites");

        // A second attach reads the file: marked there, the mark comes back; unmarked, the fresh sites do.
        SiteFinder warm = SiteFinder.cachedIn(cacheDir, notes::add);
        ProbeSpec graph = spec("fn:ggml_graph_compute:handle_cpu_graph_enter");
        assertEquals(ProbeSites.find(cpu, null, graph, new ArrayList<>()), warm.find(cpu, null, graph, new ArrayList<>()));
        Path entry = cacheDir.resolve(sha256(cpu) + ".sites.json");
        ObjectNode json = (ObjectNode) JSON.readTree(entry.toFile());
        ((ObjectNode) json.get("sites").get(ProbeSites.key(graph)).get(0)).put("reason", "from-the-cache");
        Files.writeString(entry, JSON.writeValueAsString(json));
        assertEquals("from-the-cache", SiteFinder.cachedIn(cacheDir, notes::add)
                .find(cpu, null, graph, new ArrayList<>()).getFirst().reason());
        assertEquals(List.of(), notes, "nothing was ignored");
    }

    @Test
    void aCorruptCacheFileIsIgnoredWithALineAndReplaced() throws Exception {
        Path cpu = copyOf("libggml-cpu.so");
        Path cacheDir = work.resolve("layouts");
        Files.createDirectories(cacheDir);
        Path entry = cacheDir.resolve(sha256(cpu) + ".sites.json");
        Files.writeString(entry, "{\"formatVersion\": 1, \"sites\": [[[");
        List<String> notes = new ArrayList<>();

        ProbeSpec graph = spec("fn:ggml_graph_compute:handle_cpu_graph_enter");
        List<Site> sites = SiteFinder.cachedIn(cacheDir, notes::add).find(cpu, null, graph, new ArrayList<>());
        assertEquals(ProbeSites.find(cpu, null, graph, new ArrayList<>()), sites);
        assertFalse(sites.isEmpty());
        assertEquals(1, notes.size(), notes.toString());
        assertTrue(notes.getFirst().startsWith("infertop: ignored the probe-site cache " + entry + " (unreadable"),
                notes.getFirst());
        assertNotNull(JSON.readTree(entry.toFile()).get("sites").get(ProbeSites.key(graph)), "replaced by a good one");
    }

    @Test
    void anotherLibrarysEntryUnderThisLibrarysNameIsIgnoredWithALine() throws Exception {
        Path cpu = copyOf("libggml-cpu.so");
        Path llama = copyOf("libllama.so");
        Path cacheDir = work.resolve("layouts");
        SiteFinder.cachedIn(cacheDir, line -> { }).find(llama, null, librarySpecs().getFirst(), new ArrayList<>());
        Files.copy(cacheDir.resolve(sha256(llama) + ".sites.json"), cacheDir.resolve(sha256(cpu) + ".sites.json"));
        List<String> notes = new ArrayList<>();

        ProbeSpec graph = spec("fn:ggml_graph_compute:handle_cpu_graph_enter");
        List<Site> sites = SiteFinder.cachedIn(cacheDir, notes::add).find(cpu, null, graph, new ArrayList<>());
        assertEquals(ProbeSites.find(cpu, null, graph, new ArrayList<>()), sites);
        assertEquals(List.of("infertop: ignored the probe-site cache " + cacheDir.resolve(sha256(cpu) + ".sites.json")
                + " (it describes another file); reading the library again"), notes);
    }

    @Test
    void aRootOnlyFileUnchangedSinceItWasHashedIsNotHashedAgainAnotherIs() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the copies must be root's");
        Path cpu = copyOf("libggml-cpu.so");
        Path llama = copyOf("libllama.so");
        Files.setPosixFilePermissions(cpu, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path cacheDir = work.resolve("layouts");
        ProbeSpec graph = spec("fn:ggml_graph_compute:handle_cpu_graph_enter");
        SiteFinder.cachedIn(cacheDir, line -> { }).find(llama, null, graph, new ArrayList<>());
        SiteFinder.cachedIn(cacheDir, line -> { }).find(cpu, null, graph, new ArrayList<>());
        List<Path> hashes;
        try (var files = Files.list(cacheDir)) {
            hashes = files.filter(f -> f.getFileName().toString().startsWith("stat-")).toList();
        }
        assertEquals(2, hashes.size(), "a recorded hash per root-only library: " + hashes);

        // Point libggml-cpu's recorded hash at libllama's entry: used without hashing, it names the wrong entry,
        // which the size check then refuses (and the sites are read afresh).
        Path cpuHash = hashes.stream().filter(f -> {
            try {
                return Files.readString(f).contains(sha256(cpu));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).findFirst().orElseThrow();
        Files.writeString(cpuHash, Files.readString(cpuHash).replace(sha256(cpu), sha256(llama)));
        List<String> notes = new ArrayList<>();
        assertEquals(ProbeSites.find(cpu, null, graph, new ArrayList<>()),
                SiteFinder.cachedIn(cacheDir, notes::add).find(cpu, null, graph, new ArrayList<>()));
        assertEquals(List.of("infertop: ignored the probe-site cache " + cacheDir.resolve(sha256(llama) + ".sites.json")
                + " (it describes another file); reading the library again"), notes, "the recorded hash was used");

        // Writable by its group: hashed every time, whatever is recorded.
        Files.writeString(cpuHash, Files.readString(cpuHash).replace(sha256(cpu), sha256(llama)));
        Files.setPosixFilePermissions(cpu, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxr-x"));
        notes.clear();
        assertEquals(ProbeSites.find(cpu, null, graph, new ArrayList<>()),
                SiteFinder.cachedIn(cacheDir, notes::add).find(cpu, null, graph, new ArrayList<>()));
        assertEquals(List.of(), notes, "hashed, not taken from the record");
    }

    @Test
    void anEntryIsCheckedAgainstTheLibraryAndTheBuildThatWroteIt() {
        Map<String, List<Site>> sites = Map.of("fn:f:p", List.of(new Site("f", 0x1000, "entry")));
        String sha = "ab".repeat(32);
        SiteCache.Entry good = new SiteCache.Entry(SiteCache.FORMAT_VERSION, SiteCache.TOOL, 0x2000, sha, false, sites);
        assertNull(SiteCache.problem(good, 0x2000, sha));
        assertEquals("written by another infertop build", SiteCache.problem(new SiteCache.Entry(
                SiteCache.FORMAT_VERSION, "infertop 0.1 1@1", 0x2000, sha, false, sites), 0x2000, sha));
        assertEquals("format 99, this infertop reads " + SiteCache.FORMAT_VERSION, SiteCache.problem(
                new SiteCache.Entry(99, SiteCache.TOOL, 0x2000, sha, false, sites), 0x2000, sha));
        assertEquals("it describes another file", SiteCache.problem(good, 0x2001, sha));
        assertEquals("it describes another file", SiteCache.problem(good, 0x2000, "cd".repeat(32)));
        SiteCache.Entry outside = new SiteCache.Entry(SiteCache.FORMAT_VERSION, SiteCache.TOOL, 0x2000, sha, false,
                Map.of("fn:f:p", List.of(new Site("f", 0x2000, "entry"))));
        assertEquals("a site outside the library or malformed, for fn:f:p", SiteCache.problem(outside, 0x2000, sha));
        SiteCache.Entry nullText = new SiteCache.Entry(SiteCache.FORMAT_VERSION, SiteCache.TOOL, 0x2000, sha, false,
                Map.of("fn:f:p", List.of(new Site("f", 0x10, null))));
        assertEquals("a site outside the library or malformed, for fn:f:p", SiteCache.problem(nullText, 0x2000, sha));
        assertEquals("no site table, or too many probes", SiteCache.problem(new SiteCache.Entry(
                SiteCache.FORMAT_VERSION, SiteCache.TOOL, 0x2000, sha, false, null), 0x2000, sha));
    }

    @Test
    void anOversizedCacheFileIsNotRead() throws Exception {
        Path cacheDir = work.resolve("layouts");
        Files.createDirectories(cacheDir);
        String sha = "ef".repeat(32);
        Files.write(cacheDir.resolve(sha + ".sites.json"), new byte[(int) SiteCache.MAX_FILE_BYTES + 1]);
        List<String> notes = new ArrayList<>();
        assertTrue(new SiteCache(cacheDir, notes::add).lookup(100, sha).isEmpty());
        assertEquals(1, notes.size());
        assertTrue(notes.getFirst().contains("larger than " + SiteCache.MAX_FILE_BYTES + " bytes"), notes.getFirst());
    }

    private static List<ProbeSpec> librarySpecs() {
        return ProbeSpec.ALL.stream().filter(spec -> !(spec instanceof ProbeSpec.TracepointProbe)).toList();
    }

    private static ProbeSpec spec(String key) {
        return librarySpecs().stream().filter(spec -> ProbeSites.key(spec).equals(key)).findFirst().orElseThrow();
    }

    private Path copyOf(String name) throws Exception {
        Path source = BUILD.resolve(name);
        boolean present = Files.isRegularFile(source);
        if (!present && "true".equals(System.getenv("CI"))) {
            Assertions.fail(source + " absent: run src/scripts/setup.sh (CI=true: required)");
        }
        Assumptions.assumeTrue(present, source + " absent: run src/scripts/setup.sh");
        Path copy = work.resolve("lib").resolve(name);
        Files.createDirectories(copy.getParent());
        Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
        return copy;
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
