package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A recorded hash is served only for the very file state it was recorded for, and only for a file only root can
 * change: a rewrite, a touch, a chmod or a replacement makes the next attach hash the bytes again.
 */
class ContentHashCacheTest {
    private static final String SHA = "ab".repeat(32);

    @TempDir
    Path dir;

    private final List<String> notes = new ArrayList<>();

    private Path rootOnlyLibrary() throws Exception {
        TestTools.requireOrSkip("root".equals(System.getProperty("user.name")), "a root-owned file needs root");
        Path library = Files.writeString(dir.resolve("libggml-base.so"), "bytes");
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-r--r--"));
        return library;
    }

    @Test
    void aRecordedHashServesTheSameFileStateOnly() throws Exception {
        Path library = rootOnlyLibrary();
        ContentHashCache cache = new ContentHashCache(dir.resolve("layouts"), notes::add);
        ContentHashCache.RootStat before = ContentHashCache.RootStat.of(library).orElseThrow();
        assertEquals(Optional.empty(), cache.hashOf(before), "nothing recorded yet");
        cache.storeHash(before, SHA);
        assertEquals(Optional.of(SHA), cache.hashOf(ContentHashCache.RootStat.of(library).orElseThrow()));

        Thread.sleep(20); // ctime has ns resolution; a touch lands in another tick
        Files.setLastModifiedTime(library, FileTime.fromMillis(Files.getLastModifiedTime(library).toMillis()));
        ContentHashCache.RootStat touched = ContentHashCache.RootStat.of(library).orElseThrow();
        assertNotEquals(before, touched, "a touch moves ctime, even setting mtime back");
        assertEquals(Optional.empty(), cache.hashOf(touched));
        assertTrue(notes.isEmpty(), notes.toString());
    }

    @Test
    void aFileOthersMayWriteHasNoRootStat() throws Exception {
        Path library = rootOnlyLibrary();
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-rw-r--"));
        assertEquals(Optional.empty(), ContentHashCache.RootStat.of(library));
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-r--rw-"));
        assertEquals(Optional.empty(), ContentHashCache.RootStat.of(library));
    }

    @Test
    void aCorruptOrForeignRecordIsIgnoredWithANote() throws Exception {
        Path library = rootOnlyLibrary();
        ContentHashCache cache = new ContentHashCache(dir, notes::add);
        ContentHashCache.RootStat stat = ContentHashCache.RootStat.of(library).orElseThrow();
        Files.writeString(cache.fileFor(stat), "{not json");
        assertEquals(Optional.empty(), cache.hashOf(stat));
        assertEquals(1, notes.size(), notes.toString());
        Files.writeString(cache.fileFor(stat), "x".repeat(70_000));
        assertEquals(Optional.empty(), cache.hashOf(stat), "an oversized record is not read");
        cache.storeHash(stat, "../../etc/passwd");
        assertEquals(Optional.empty(), cache.hashOf(stat), "a hash must be 64 hex digits");
    }
}
