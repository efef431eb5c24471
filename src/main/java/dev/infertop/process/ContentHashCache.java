package dev.infertop.process;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.io.RecordJson;
import dev.infertop.ffi.RegularFile;
import dev.infertop.io.CacheFiles;
import dev.infertop.io.OutputFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The SHA-256 of library files only root can change, remembered by their stat in
 * {@code <dir>/stat-<device>-<inode>.json}: both caches keyed by a library's bytes (probe sites, struct layouts)
 * need its hash at every attach, and hashing libllama (several MB) was a noticeable part of each start. A file is
 * treated as hostile, like the caches' entries: bounded, checked, ignored (with a note) when anything is off.
 */
public final class ContentHashCache {
    /** Bumped when the JSON shape changes. */
    static final int FORMAT_VERSION = 1;
    /** Far above an entry (a few hundred bytes): a bigger file is not read. */
    private static final int MAX_FILE_BYTES = 64 * 1024;

    /** Writing only: reads go through RecordJson (Jackson's first use is dear at start; see there). */
    private static final class Writer {
        static final ObjectMapper JSON = new ObjectMapper();
    }

    /**
     * A library file only root can change (owned by root, writable by no group or other), as stat shows it: the
     * same inode with the same size, mtime and ctime still holds the bytes hashed when this was recorded (a
     * replaced file is another inode; a write, a chmod or a touch moves ctime, which no one can set back).
     */
    public record RootStat(long device, long inode, long sizeBytes, long modifiedNs, long changedNs) {
        /** The stat of the opened {@code file}, which {@code path} names, when only root can change it. */
        public static Optional<RootStat> of(Path path, RegularFile file) {
            return of(path).filter(stat -> stat.device() == file.device() && stat.inode() == file.inode());
        }

        /**
         * The stat of {@code opened} (a {@code /proc/self/fd/N} link of an open file, which stat follows to that
         * very file) when only root can change it; empty otherwise.
         */
        public static Optional<RootStat> of(Path opened) {
            try {
                Map<String, Object> stat = Files.readAttributes(opened,
                        "unix:dev,ino,size,uid,mode,lastModifiedTime,ctime");
                if ((Integer) stat.get("uid") != 0 || ((Integer) stat.get("mode") & 0022) != 0) {
                    return Optional.empty(); // one others may write: hashed every time
                }
                return Optional.of(new RootStat((Long) stat.get("dev"), (Long) stat.get("ino"),
                        (Long) stat.get("size"), ((FileTime) stat.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS),
                        ((FileTime) stat.get("ctime")).to(TimeUnit.NANOSECONDS)));
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
    }

    /** The hash recorded for a root-only file in this exact state. */
    record HashEntry(int formatVersion, RootStat stat, String contentSha256) {}

    private final Path directory;
    private final Consumer<String> notes;

    /** {@code notes} hears one line per record ignored as unreadable. */
    public ContentHashCache(Path directory, Consumer<String> notes) {
        this.directory = directory;
        this.notes = notes;
    }

    Path fileFor(RootStat stat) {
        return directory.resolve("stat-" + stat.device() + "-" + stat.inode() + ".json");
    }

    /** The SHA-256 recorded for this root-only file in exactly this state, if any. */
    public Optional<String> hashOf(RootStat stat) {
        Path file = fileFor(stat);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            HashEntry entry = RecordJson.read(CacheFiles.readAtMost(file, MAX_FILE_BYTES), HashEntry.class);
            if (entry.formatVersion() == FORMAT_VERSION && stat.equals(entry.stat())
                    && entry.contentSha256() != null && entry.contentSha256().matches("[0-9a-f]{64}")) {
                return Optional.of(entry.contentSha256());
            }
            return Optional.empty(); // the file changed since (or another one took its inode): hashed again
        } catch (IOException | RecordJson.Malformed | RuntimeException e) {
            notes.accept("infertop: ignored the recorded hash " + file + " (unreadable: "
                    + CacheFiles.firstLine(e.getMessage()) + "); hashing the library again");
            return Optional.empty();
        }
    }

    /** Records the hash of a root-only file (best effort: without it the next attach hashes the file again). */
    public void storeHash(RootStat stat, String contentSha256) {
        try {
            Files.createDirectories(directory);
            byte[] json = Writer.JSON.writeValueAsBytes(new HashEntry(FORMAT_VERSION, stat, contentSha256));
            OutputFiles.replace(fileFor(stat), out -> out.write(json));
        } catch (IOException e) {
            // only slower next time
        }
    }
}
