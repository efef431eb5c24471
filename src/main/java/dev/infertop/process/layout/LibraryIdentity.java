package dev.infertop.process.layout;

import dev.infertop.process.ContentHashCache;
import dev.infertop.process.ElfFile;
import dev.infertop.process.TargetException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * What a cached calibration is keyed and validated by. The key is the GNU build-id (a copy or a rename of the
 * same build shares its layout) or, without one, the file's SHA-256. Size and SHA-256 are also compared on
 * lookup: a file rewritten in place (even keeping its build-id) is calibrated again, and a crafted file that
 * copies a build's id, size and mtime cannot have its layout served for the real one.
 */
record LibraryIdentity(String key, String buildId, String path, long sizeBytes, long modifiedMillis,
                       String contentSha256) {
    /** Far above any libggml-base or pre-split libggml (a few MB): hashing is bounded. */
    static final long MAX_LIBRARY_BYTES = 1L << 30;


    /** The identity of the file {@code library} names now (tests; see {@link #of(LibraryFile, ContentHashCache)}). */
    static LibraryIdentity of(Path library) throws CalibrationException {
        try {
            return of(library, library, library.toRealPath().toString(), null);
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot stat it: " + e.getMessage());
        }
    }

    /**
     * The identity of an opened library: read through the open file, so it is the file the child gets. Its hash
     * is taken from {@code hashes} when recorded for a root-only file in this very state (else computed and
     * recorded there).
     */
    static LibraryIdentity of(LibraryFile file, ContentHashCache hashes) throws CalibrationException {
        return of(file.shownAs(), file.procPath(), file.shownAs().toString(), hashes);
    }

    private static LibraryIdentity of(Path library, Path readThrough, String path, ContentHashCache hashes)
            throws CalibrationException {
        String buildId;
        try (ElfFile elf = ElfFile.openHeaders(readThrough)) {
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
            if (!attributes.isRegularFile() || size > MAX_LIBRARY_BYTES) {
                throw CalibrationException.of(library, "it is not a regular file of at most " + MAX_LIBRARY_BYTES
                        + " bytes");
            }
            Optional<ContentHashCache.RootStat> stat = hashes == null ? Optional.empty()
                    : ContentHashCache.RootStat.of(readThrough).filter(s -> s.sizeBytes() == size);
            String content = stat.flatMap(known -> hashes.hashOf(known)).orElse(null);
            if (content == null) {
                content = sha256Of(readThrough, size);
                String hashed = content;
                stat.ifPresent(known -> hashes.storeHash(known, hashed));
            }
            String key = buildId != null ? buildId : "nobuildid-" + content.substring(0, 32);
            return new LibraryIdentity(key, buildId, path, size, modified, content);
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot read it: " + e.getMessage());
        }
    }

    /** Same build, same bytes. */
    boolean sameFileAs(LibraryIdentity other) {
        return key.equals(other.key) && sizeBytes == other.sizeBytes && contentSha256 != null
                && contentSha256.equals(other.contentSha256);
    }

    /** SHA-256 of at most {@code sizeBytes} bytes of the file (it may not grow the hash past what was stat'ed). */
    private static String sha256Of(Path file, long sizeBytes) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
        byte[] buffer = new byte[1 << 16];
        long left = sizeBytes;
        try (java.io.InputStream in = Files.newInputStream(file)) {
            int n;
            while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) {
                digest.update(buffer, 0, n);
                left -= n;
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
