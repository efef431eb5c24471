package dev.infertop.target.layout;

import dev.infertop.target.ElfFile;
import dev.infertop.target.TargetException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What a cached calibration is keyed and validated by. The key is the GNU build-id (a copy or a rename of the
 * same build shares its layout) or, without one, a hash of path, size and mtime. Size and mtime are also
 * compared on lookup, so a file rewritten in place (even keeping its build-id) is calibrated again.
 */
record LibraryIdentity(String key, String buildId, String path, long sizeBytes, long modifiedMillis) {

    /** The identity of the file {@code library} names now (tests; see {@link #of(LibraryFile)}). */
    static LibraryIdentity of(Path library) throws CalibrationException {
        try {
            return of(library, library, library.toRealPath().toString());
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot stat it: " + e.getMessage());
        }
    }

    /** The identity of an opened library: read through the open file, so it is the file the child gets. */
    static LibraryIdentity of(LibraryFile file) throws CalibrationException {
        return of(file.shownAs(), file.procPath(), file.shownAs().toString());
    }

    private static LibraryIdentity of(Path library, Path readThrough, String path) throws CalibrationException {
        String buildId;
        try (ElfFile elf = ElfFile.open(readThrough)) {
            buildId = elf.buildId().orElse(null);
        } catch (TargetException e) {
            throw CalibrationException.of(library, e.getMessage());
        }
        if (buildId != null && !buildId.matches("[0-9a-f]{2,128}")) {
            // It names the cache file: nothing but hex digits may reach a path.
            throw CalibrationException.of(library, "its build-id is not a hex string");
        }
        try {
            BasicFileAttributes attributes = Files.readAttributes(readThrough, BasicFileAttributes.class);
            long size = attributes.size();
            long modified = attributes.lastModifiedTime().toMillis();
            String key = buildId != null ? buildId : "nobuildid-" + sha256(path + "\0" + size + "\0" + modified);
            return new LibraryIdentity(key, buildId, path, size, modified);
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot stat it: " + e.getMessage());
        }
    }

    /** Same build, same file contents as far as size and mtime tell. */
    boolean sameFileAs(LibraryIdentity other) {
        return key.equals(other.key) && sizeBytes == other.sizeBytes && modifiedMillis == other.modifiedMillis;
    }

    private static String sha256(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
