package dev.infertop.metrics;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * {@code Authorization} headers that passed a bcrypt check, so that a scraper's next requests cost a SHA-256
 * and no bcrypt. What is kept is the SHA-256 of a random salt (drawn once per run) and the header, never the
 * header: a heap dump gives no password, nor a digest to test guesses against without the salt. A lookup
 * compares the digest with every slot with {@link MessageDigest#isEqual} and stops at none, so its time says
 * nothing of which slot, or how much of one, matched.
 *
 * <p>Fixed size: {@link #CAPACITY} digests; one more replaces the oldest. Only a header whose password passed
 * gets in, so a client without a password cannot push a scraper's out. Thread-safe.
 */
final class RememberedCredentials {
    static final int CAPACITY = 16;
    private static final int SALT_BYTES = 16;

    private final byte[] salt = new byte[SALT_BYTES];
    /** Guarded by this; null while never used. */
    private final byte[][] slots = new byte[CAPACITY][];
    /** Where the next digest goes (the oldest, once all are used). Guarded by this. */
    private int next;

    RememberedCredentials() {
        new SecureRandom().nextBytes(salt);
    }

    /** The salted digest of {@code header} (the header's value as sent). */
    byte[] digest(String header) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            sha256.update(salt);
            return sha256.digest(header.getBytes(StandardCharsets.ISO_8859_1));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Whether {@code digest} is one remembered: every slot is compared, in constant time each. */
    synchronized boolean contains(byte[] digest) {
        boolean found = false;
        for (byte[] slot : slots) {
            found |= slot != null && MessageDigest.isEqual(slot, digest);
        }
        return found;
    }

    /** Remembers {@code digest} (once), in place of the oldest when all slots are used. */
    synchronized void add(byte[] digest) {
        if (contains(digest)) {
            return;
        }
        slots[next] = digest.clone();
        next = (next + 1) % CAPACITY;
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
