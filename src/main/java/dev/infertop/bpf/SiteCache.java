package dev.infertop.bpf;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.io.RecordJson;
import dev.infertop.bpf.ProbeSites.Site;
import dev.infertop.io.CacheFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Probe sites on disk, one JSON file per library content: {@code <dir>/<sha-256>.sites.json}, beside the
 * layout cache's entries. Finding the sites reads every symbol table of a library and decodes the probed
 * functions (about a second for a llama.cpp build on a busy 2-core machine); a second attach to the same build
 * reads them instead. Keyed by the bytes' SHA-256 rather than the build-id: a build-id can be copied into
 * another file, the bytes cannot. The file is treated as hostile (anyone who could write the cache directory
 * could have written it): bounded in size, every field checked against the library it claims to describe,
 * and ignored, with a line saying why, when anything is off. An entry also names the infertop build that
 * wrote it ({@link #TOOL}): a newer probe placement must not be served an older one's sites.
 */
final class SiteCache {
    /** Bumped when the JSON shape changes. */
    static final int FORMAT_VERSION = 1;
    /** Far above an entry for a real build (a few KB): a bigger file is not read. */
    static final long MAX_FILE_BYTES = 1 << 20;
    /** Far above what ProbeSpec.ALL asks for (a dozen keys), and sites per key (a handful). */
    static final int MAX_KEYS = 256;
    static final int MAX_SITES_PER_KEY = 4096;
    static final int MAX_TEXT_CHARS = 1024;
    /** The infertop build that places probes: its version and its jar's size and time (each build its own). */
    static final String TOOL = toolIdentity();

    /** Writing only: reads go through RecordJson (Jackson's first use is dear at start; see there). */
    private static final class Writer {
        static final ObjectMapper JSON = new ObjectMapper();
    }

    /**
     * One library's sites.
     *
     * @param sites    by {@link ProbeSites#key}: every probe of {@link ProbeSpec#ALL} with a library site, found
     *                 or not (an empty list: none in this library)
     * @param stripped whether the library has no .symtab (what a missing probe's message says)
     */
    record Entry(int formatVersion, String tool, long sizeBytes, String contentSha256, boolean stripped,
                 Map<String, List<Site>> sites) {}

    private final Path directory;
    private final Consumer<String> notes;

    /** {@code notes} hears one line per cache file ignored (corrupt, foreign, another build's). */
    SiteCache(Path directory, Consumer<String> notes) {
        this.directory = directory;
        this.notes = notes;
    }

    Path fileFor(String contentSha256) {
        return directory.resolve(contentSha256 + ".sites.json");
    }

    /** The entry stored for a library of these bytes, if there is one and it passes every check. */
    Optional<Entry> lookup(long sizeBytes, String contentSha256) {
        Path file = fileFor(contentSha256);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            Entry entry = RecordJson.read(CacheFiles.readAtMost(file, (int) MAX_FILE_BYTES), Entry.class);
            String problem = problem(entry, sizeBytes, contentSha256);
            if (problem != null) {
                notes.accept("infertop: ignored the probe-site cache " + file + " (" + problem
                        + "); reading the library again");
                return Optional.empty();
            }
            return Optional.of(entry);
        } catch (IOException | RecordJson.Malformed | RuntimeException e) {
            notes.accept("infertop: ignored the probe-site cache " + file + " (unreadable: "
                    + CacheFiles.firstLine(e.getMessage()) + "); reading the library again");
            return Optional.empty();
        }
    }

    /** Writes atomically (temp file + rename): a concurrent reader sees the old entry or the new one. */
    void store(Entry entry) throws IOException {
        write(fileFor(entry.contentSha256()), entry);
    }

    private void write(Path file, Object entry) throws IOException {
        Files.createDirectories(directory);
        Path temporary = Files.createTempFile(directory, "sites", ".tmp");
        try {
            Files.write(temporary, Writer.JSON.writeValueAsBytes(entry));
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    /** Why {@code entry} cannot be used for the library of these bytes, or null when it can. */
    static String problem(Entry entry, long sizeBytes, String contentSha256) {
        if (entry == null) {
            return "empty";
        }
        if (entry.formatVersion() != FORMAT_VERSION) {
            return "format " + entry.formatVersion() + ", this infertop reads " + FORMAT_VERSION;
        }
        if (!TOOL.equals(entry.tool())) {
            return "written by another infertop build";
        }
        if (entry.sizeBytes() != sizeBytes || !contentSha256.equals(entry.contentSha256())) {
            return "it describes another file";
        }
        if (entry.sites() == null || entry.sites().size() > MAX_KEYS) {
            return "no site table, or too many probes";
        }
        for (Map.Entry<String, List<Site>> probe : entry.sites().entrySet()) {
            if (probe.getKey() == null || probe.getKey().length() > MAX_TEXT_CHARS || probe.getValue() == null
                    || probe.getValue().size() > MAX_SITES_PER_KEY) {
                return "a malformed probe entry";
            }
            for (Site site : probe.getValue()) {
                if (site == null || !shortText(site.what()) || !shortText(site.reason()) || !shortText(site.callee())
                        || site.fileOffset() < 0 || site.fileOffset() >= sizeBytes) {
                    return "a site outside the library or malformed, for " + probe.getKey();
                }
            }
        }
        return null;
    }

    private static boolean shortText(String text) {
        return text != null && text.length() <= MAX_TEXT_CHARS;
    }

    private static String toolIdentity() {
        String version = SiteCache.class.getPackage().getImplementationVersion();
        String code = "classes";
        try {
            Path source = Path.of(SiteCache.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(source)) {
                code = Files.size(source) + "@" + Files.getLastModifiedTime(source).toMillis();
            } else if (Files.isDirectory(source)) {
                // Run from classes (tests): the newest class of the packages that find sites stands for the build.
                long newest = 0;
                for (String dir : List.of("dev/infertop/bpf", "dev/infertop/process")) {
                    try (var classes = Files.list(source.resolve(dir))) {
                        for (Path file : (Iterable<Path>) classes::iterator) {
                            newest = Math.max(newest, Files.getLastModifiedTime(file).toMillis());
                        }
                    }
                }
                code = "classes@" + newest;
            }
        } catch (Exception e) {
            // No code source (an unusual class loader): the version alone names the build.
        }
        return "infertop " + (version == null ? "dev" : version) + " " + code;
    }
}
