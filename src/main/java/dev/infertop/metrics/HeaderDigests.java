package dev.infertop.metrics;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * {@code Authorization} headers basic auth has decided (those that passed a bcrypt check; those that failed one),
 * so that the same header again costs a SHA-256 and no bcrypt. What is kept is the SHA-256 of a random salt
 * (drawn once per run, {@link #newSalt}) and the header, never the header: a heap dump gives no password, nor a
 * digest to test guesses against without the salt. A lookup compares the digest with every slot with
 * {@link MessageDigest#isEqual} and stops at none, so its time says nothing of which slot, or how much of one,
 * matched.
 *
 * <p>Fixed size: {@code capacity} digests; one more replaces the oldest. Thread-safe.
 */
final class HeaderDigests {
    private static final int SALT_BYTES = 16;

    /** Guarded by this; null while never used. */
    private final byte[][] slots;
    /** Where the next digest goes (the oldest, once all are used). Guarded by this. */
    private int next;

    HeaderDigests(int capacity) {
        slots = new byte[capacity][];
    }

    static byte[] newSalt() {
        byte[] salt = new byte[SALT_BYTES];
        new SecureRandom().nextBytes(salt);
        return salt;
    }

    /** The salted digest of {@code header} (the header's value as sent). */
    static byte[] digest(byte[] salt, String header) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            sha256.update(salt);
            return sha256.digest(header.getBytes(StandardCharsets.ISO_8859_1));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Whether {@code digest} is one held: every slot is compared, in constant time each. */
    synchronized boolean contains(byte[] digest) {
        boolean found = false;
        for (byte[] slot : slots) {
            found |= slot != null && MessageDigest.isEqual(slot, digest);
        }
        return found;
    }

    /** Holds {@code digest} (once), in place of the oldest when all slots are used. */
    synchronized void add(byte[] digest) {
        if (contains(digest)) {
            return;
        }
        slots[next] = digest.clone();
        next = (next + 1) % slots.length;
    }

    /** Digests held (tests). */
    synchronized int size() {
        int size = 0;
        for (byte[] slot : slots) {
            size += slot != null ? 1 : 0;
        }
        return size;
    }
}
