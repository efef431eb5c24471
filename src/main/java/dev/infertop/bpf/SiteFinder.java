package dev.infertop.bpf;

import dev.infertop.bpf.ProbeSites.Site;
import dev.infertop.ffi.RegularFile;
import dev.infertop.process.ContentHashCache;
import dev.infertop.process.ElfFile;
import dev.infertop.process.MappedFile;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.PltResolver;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.ScanTimeLimit;
import dev.infertop.process.TargetException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Consumer;

/**
 * Where every probe goes in each library, read once per library for all probes (one ELF decoding, not one per
 * probe), kept for the session and, through {@link SiteCache}, for the next attach to the same build. The
 * session starts {@link #prefetch} while the BPF object loads (the load needs none of it); {@link ProbeSet}
 * then asks here and gets the sites at once, waits for a library being read, or reads it itself.
 *
 * <p>A library read here is read from a private copy of its bytes, hashed and decoded both from that copy:
 * the sites stored under a hash are those of the bytes with that hash, even when the file's owner rewrites it
 * meanwhile. A library this cannot read (corrupt, too large, replaced) is left to ProbeSet's own reading,
 * which says why it is skipped.
 */
public final class SiteFinder {
    /**
     * Libraries larger than this are read by ProbeSet as before, not copied or cached: the copy costs its size
     * in memory while it is decoded (a llama.cpp CPU build's largest, libllama, is ~5 MB).
     */
    static final long MAX_COPIED_BYTES = 64L << 20;

    /**
     * A library's sites, read from the file of this device and inode; or, with {@code failure}, why it cannot
     * be read (a corrupt or hostile ELF, the time limit): ProbeSet skips it with that line, not reading it again.
     */
    record Scanned(long device, long inode, boolean stripped, Map<String, List<Site>> sites, String failure) {
        boolean isFileOf(MemoryMapping mapping) {
            return mapping == null || mapping.isFile(device, inode);
        }
    }

    /** Null: sites are kept for the session only. */
    private final SiteCache cache;
    /** The recorded hashes of root-only libraries, beside the cache (null with it). */
    private final ContentHashCache hashes;
    private final Map<Path, FutureTask<Optional<Scanned>>> scans = new ConcurrentHashMap<>();

    private SiteFinder(SiteCache cache, ContentHashCache hashes) {
        this.cache = cache;
        this.hashes = hashes;
    }

    /** Sites cached in {@code directory} across sessions; {@code notes} hears why a cache file was ignored. */
    public static SiteFinder cachedIn(Path directory, Consumer<String> notes) {
        return new SiteFinder(new SiteCache(directory, notes), new ContentHashCache(directory, notes));
    }

    /** Sites kept for this session only. */
    public static SiteFinder uncached() {
        return new SiteFinder(null, null);
    }

    /**
     * Reads {@code libraries} (as process {@code pid} maps them, when it does) on a background thread, in order;
     * returns at once. What is not read yet when ProbeSet asks is read by the asking thread.
     */
    public void prefetch(Collection<Path> libraries, int pid) {
        List<Path> ordered = List.copyOf(libraries);
        Thread.ofPlatform().daemon().name("infertop-sites").start(() -> {
            Map<String, MemoryMapping> mapped = new LinkedHashMap<>();
            try {
                for (MemoryMapping mapping : ProcessMaps.of(pid).mappedLibraries()) {
                    mapped.putIfAbsent(mapping.path(), mapping);
                }
            } catch (TargetException e) {
                // No maps (the process is gone, or not exec'd yet): the files are read unchecked, then matched.
            }
            for (Path library : ordered) {
                task(library, mapped.get(library.toString())).run();
            }
        });
    }

    /** The library's sites, read now or earlier, when it is the file {@code mapping} shows (if given). */
    Optional<Scanned> scanned(Path library, MemoryMapping mapping) {
        FutureTask<Optional<Scanned>> task = task(library, mapping);
        task.run(); // a no-op when done or running elsewhere
        try {
            return task.get().filter(scanned -> scanned.isFileOf(mapping));
        } catch (ExecutionException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * Checks that {@code library} can be probed (ProbeSet's check before it adds one): read here (or now) from
     * the file {@code mapping} shows, or else opened and its library-wide tables read, within the time limit.
     * Throws, saying why, for a library to skip.
     */
    void admit(Path library, MemoryMapping mapping) throws TargetException {
        Optional<Scanned> read = scanned(library, mapping);
        if (read.isPresent() && read.get().failure() != null) {
            throw new TargetException(read.get().failure());
        }
        if (read.isEmpty()) {
            ScanTimeLimit.run(library.toString(), ScanTimeLimit.limitMs(), () -> {
                try (ElfFile elf = ElfFile.open(library, mapping)) {
                    PltResolver.of(elf); // the library-wide tables call-site probes read
                    return null;
                }
            });
        }
    }

    /** The probe's sites: from this session's reading of the library, else read now (failures say why). */
    List<Site> find(Path library, MemoryMapping mapping, ProbeSpec spec, List<String> failures) {
        Optional<Scanned> scanned = scanned(library, mapping).filter(read -> read.failure() == null);
        if (scanned.isPresent()) {
            List<Site> sites = scanned.get().sites().get(ProbeSites.key(spec));
            if (sites != null) {
                return sites;
            }
        }
        return ProbeSites.find(library, mapping, spec, failures);
    }

    private FutureTask<Optional<Scanned>> task(Path library, MemoryMapping mapping) {
        return scans.computeIfAbsent(library, l -> new FutureTask<>(() -> read(l, mapping)));
    }

    /** The library's sites from the cache, else from its bytes; empty when it cannot be read here. */
    private Optional<Scanned> read(Path library, MemoryMapping mapping) {
        // Not the mapped file (replaced, a link to a FIFO or a device): empty, and ProbeSet's reading says why.
        try (RegularFile file = mapping == null ? RegularFile.open(library, MAX_COPIED_BYTES, true)
                : MappedFile.open(library, mapping, MAX_COPIED_BYTES)) {
            Optional<ContentHashCache.RootStat> stat = cache == null ? Optional.empty()
                    : ContentHashCache.RootStat.of(library, file);
            if (cache != null) {
                // A root-owned file no one else may write, unchanged since it was hashed (same inode, size, mtime
                // and ctime), has that hash still: no need to read it all again.
                String sha = stat.flatMap(hashes::hashOf).orElse(null);
                if (sha == null) {
                    sha = sha256(file);
                    String hashed = sha;
                    stat.ifPresent(known -> hashes.storeHash(known, hashed));
                }
                Optional<SiteCache.Entry> entry = cache.lookup(file.sizeBytes(), sha)
                        .filter(e -> e.sites().keySet().containsAll(libraryProbeKeys()));
                if (entry.isPresent()) {
                    return Optional.of(new Scanned(file.device(), file.inode(), entry.get().stripped(),
                            Map.copyOf(entry.get().sites()), null));
                }
            }
            try {
                return Optional.of(readCopy(library, file, stat));
            } catch (TargetException e) {
                return Optional.of(new Scanned(file.device(), file.inode(), false, Map.of(), e.getMessage()));
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // not opened, too large, replaced: ProbeSet's own reading says why
        }
    }

    /** Copies the bytes, hashes and decodes the copy, and caches what it found. */
    private Scanned readCopy(Path library, RegularFile file, Optional<ContentHashCache.RootStat> stat)
            throws IOException { // TargetException: the ELF
        long size = file.sizeBytes();
        Arena arena = Arena.ofShared(); // the ElfFile's once parsed: its close releases the copy
        try {
            MemorySegment copy = arena.allocate(Math.max(1, size));
            ByteBuffer buffer = copy.asByteBuffer().limit((int) size);
            while (buffer.hasRemaining()) {
                if (file.channel().read(buffer, buffer.position()) < 0) {
                    throw new IOException(library + " shrank while infertop read it");
                }
            }
            String sha = cache == null ? "" : sha256(buffer.flip());
            Map<String, List<Site>> sites = new LinkedHashMap<>();
            boolean stripped = ScanTimeLimit.run(library.toString(), ScanTimeLimit.limitMs(), () -> {
                try (ElfFile elf = ElfFile.parse(library, arena, copy.asSlice(0, size))) {
                    PltResolver.of(elf); // what ProbeSet checks a library with before it probes it
                    for (ProbeSpec spec : ProbeSpec.ALL) {
                        if (!(spec instanceof ProbeSpec.TracepointProbe)) {
                            sites.put(ProbeSites.key(spec), List.copyOf(ProbeSites.sitesIn(elf, spec)));
                        }
                    }
                    return elf.isStripped();
                }
            });
            if (cache != null) {
                try {
                    cache.store(new SiteCache.Entry(SiteCache.FORMAT_VERSION, SiteCache.TOOL, size, sha, stripped,
                            sites));
                    stat.ifPresent(known -> hashes.storeHash(known, sha));
                } catch (IOException e) {
                    // The sites are right; only the next attach will read the library again.
                }
            }
            return new Scanned(file.device(), file.inode(), stripped, Map.copyOf(sites), null);
        } finally {
            if (arena.scope().isAlive()) {
                arena.close(); // a parse that failed, or timed out (its thread then fails on the closed copy)
            }
        }
    }

    private static List<String> libraryProbeKeys() {
        return ProbeSpec.ALL.stream().filter(spec -> !(spec instanceof ProbeSpec.TracepointProbe))
                .map(ProbeSites::key).toList();
    }

    private static String sha256(RegularFile file) throws IOException {
        MessageDigest digest = sha256();
        ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
        long position = 0;
        while (position < file.sizeBytes()) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), file.sizeBytes() - position));
            int n = file.channel().read(buffer, position);
            if (n <= 0) {
                throw new IOException("the file shrank while infertop read it");
            }
            position += n;
            digest.update(buffer.flip());
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static String sha256(ByteBuffer bytes) {
        MessageDigest digest = sha256();
        digest.update(bytes);
        return HexFormat.of().formatHex(digest.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
