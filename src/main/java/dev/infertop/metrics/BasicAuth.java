package dev.infertop.metrics;

import at.favre.lib.crypto.bcrypt.BCrypt;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@code basic_auth_users} of a web config: user name to bcrypt hash ({@code $2a$}, {@code $2b$}, {@code $2y$},
 * as htpasswd -B and Go's bcrypt write them).
 *
 * <p>bcrypt is slow on purpose (tens of milliseconds at cost 10), so a scrape client must not be able to make
 * infertop spend it freely: one check runs at a time (a client guessing passwords gets at most one core, not
 * one per connection), and a password that passed is remembered per user as its SHA-256, so every later scrape
 * with it costs a hash and a constant-time comparison ({@link MessageDigest#isEqual}), never the lock. An
 * unknown user is checked against a hash of the same cost, so the time taken does not say which users exist.
 */
final class BasicAuth {
    /** bcrypt reads at most 72 bytes of a password; a longer one is refused rather than cut. */
    private static final int MAX_PASSWORD_BYTES = 72;
    static final String CHALLENGE = "Basic realm=\"infertop\", charset=\"UTF-8\"";

    private final Map<String, byte[]> hashes;
    private final byte[] unknownUserHash;
    private final Map<String, byte[]> passed = new ConcurrentHashMap<>();
    private final ReentrantLock checking = new ReentrantLock();

    /** @param hashes user to bcrypt hash, at least one, each already checked for form ({@link #isBcryptHash}) */
    BasicAuth(Map<String, String> hashes) {
        Map<String, byte[]> bytes = new HashMap<>();
        hashes.forEach((user, hash) -> bytes.put(user, hash.getBytes(StandardCharsets.US_ASCII)));
        this.hashes = Map.copyOf(bytes);
        // An unknown user costs what a known one does: a check against a real hash, whose answer is dropped.
        unknownUserHash = this.hashes.values().iterator().next();
    }

    /** A bcrypt hash as the modular crypt format writes it: {@code $2y$10$} and 53 characters of salt and hash. */
    static boolean isBcryptHash(String hash) {
        if (!hash.matches("\\$2[aby]\\$[0-9]{2}\\$[./A-Za-z0-9]{53}")) {
            return false;
        }
        int cost = Integer.parseInt(hash.substring(4, 6));
        return cost >= BCrypt.MIN_COST && cost <= BCrypt.MAX_COST;
    }

    /** Whether {@code authorization} (the header's value, or null) names a user with their password. */
    boolean allows(String authorization) {
        if (authorization == null || authorization.length() < 6
                || !authorization.substring(0, 6).toLowerCase(Locale.ROOT).equals("basic ")) {
            return false;
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return false;
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return false;
        }
        String user = decoded.substring(0, colon);
        byte[] password = decoded.substring(colon + 1).getBytes(StandardCharsets.UTF_8);
        if (password.length > MAX_PASSWORD_BYTES) {
            return false;
        }
        byte[] digest = sha256(password);
        byte[] known = passed.get(user);
        if (known != null && MessageDigest.isEqual(known, digest)) {
            return true;
        }
        byte[] hash = hashes.get(user);
        boolean verified;
        checking.lock();
        try {
            verified = BCrypt.verifyer().verify(password, hash != null ? hash : unknownUserHash).verified
                    && hash != null;
        } finally {
            checking.unlock();
        }
        if (verified) {
            passed.put(user, digest); // one per configured user: the map is as bounded as the file
        }
        return verified;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
