package dev.infertop.process.layout;

import dev.infertop.process.ContentHashCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A library's identity takes its hash from the record of a root-only file in exactly its state (a start then
 * skips hashing libllama's megabytes), and hashes the bytes again once the file changed in any way.
 */
class LibraryIdentityTest {
    @TempDir
    Path dir;

    @Test
    void theRecordedHashIsUsedUntilTheFileChanges() throws Exception {
        TestRequirements.requireOrSkip("root".equals(System.getProperty("user.name")),
                "a root-owned file needs root");
        // Any ELF file of this machine will do: a copy of the running JVM's launcher.
        Path library = Files.copy(Path.of(ProcessHandle.current().info().command().orElseThrow()),
                dir.resolve("libllama.so"));
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-r--r--"));
        ContentHashCache hashes = new ContentHashCache(dir.resolve("layouts"), note -> { });
        String real = LibraryIdentity.of(library).contentSha256(); // no record kept: hashed
        try (LibraryFile file = LibraryFile.open(library, OptionalInt.empty())) {
            assertEquals(real, identityOf(file, hashes), "hashed, then recorded");
        }
        ContentHashCache.RootStat stat = ContentHashCache.RootStat.of(library).orElseThrow();
        assertEquals(real, hashes.hashOf(stat).orElseThrow());
        String recorded = "cd".repeat(32);
        hashes.storeHash(stat, recorded);
        try (LibraryFile file = LibraryFile.open(library, OptionalInt.empty())) {
            assertEquals(recorded, identityOf(file, hashes), "the record of this very state is what is used");
        }
        Thread.sleep(20);
        Files.setLastModifiedTime(library, FileTime.fromMillis(Files.getLastModifiedTime(library).toMillis()));
        try (LibraryFile file = LibraryFile.open(library, OptionalInt.empty())) {
            assertEquals(real, identityOf(file, hashes), "touched (ctime moved): hashed again");
        }
        assertTrue(Files.exists(dir.resolve("layouts")));
    }

    private static String identityOf(LibraryFile file, ContentHashCache hashes) throws CalibrationException {
        return LibraryIdentity.of(file, hashes).contentSha256();
    }
}
