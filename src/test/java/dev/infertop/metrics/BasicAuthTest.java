package dev.infertop.metrics;

import at.favre.lib.crypto.bcrypt.BCrypt;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BasicAuthTest {
    /** $2y$, as Apache's htpasswd -B writes it; $2a$ (Go's bcrypt) and $2b$ (OpenBSD) below. */
    private static final String HTPASSWD_2Y = BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, "secret".toCharArray());

    private static String header(String userAndPassword) {
        return "Basic " + Base64.getEncoder().encodeToString(userAndPassword.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void acceptsEachBcryptVersionAndOnlyTheRightPassword() {
        BasicAuth auth = new BasicAuth(Map.of(
                "alice", HTPASSWD_2Y,
                "bob", BCrypt.with(BCrypt.Version.VERSION_2A).hashToString(4, "hunter2".toCharArray()),
                "carol", BCrypt.with(BCrypt.Version.VERSION_2B).hashToString(4, "pä:ss".toCharArray())));
        assertTrue(HTPASSWD_2Y.startsWith("$2y$04$") && BasicAuth.isBcryptHash(HTPASSWD_2Y));
        assertTrue(auth.allows(header("alice:secret")));
        assertTrue(auth.allows(header("alice:secret")), "remembered");
        assertTrue(auth.allows(header("bob:hunter2")));
        assertTrue(auth.allows(header("carol:pä:ss")), "a colon in the password");
        assertTrue(auth.allows("basic " + Base64.getEncoder().encodeToString("bob:hunter2".getBytes())), "scheme in any case");
        assertFalse(auth.allows(header("alice:Secret")));
        assertFalse(auth.allows(header("alice:secret ")));
        assertFalse(auth.allows(header("bob:secret")), "another user's password");
        assertFalse(auth.allows(header("mallory:secret")), "unknown user");
        assertFalse(auth.allows(header("alice")));
        assertFalse(auth.allows(header("alice:" + "x".repeat(100))), "past bcrypt's 72 bytes");
        assertFalse(auth.allows(null));
        assertFalse(auth.allows("Bearer abc"));
        assertFalse(auth.allows("Basic %%%not base64"));
        assertFalse(auth.allows("Basic"));
    }

    @Test
    void hashFormIsChecked() {
        assertTrue(BasicAuth.isBcryptHash(BCrypt.withDefaults().hashToString(10, "x".toCharArray())));
        assertFalse(BasicAuth.isBcryptHash("secret"));
        assertFalse(BasicAuth.isBcryptHash("$2y$03$" + "a".repeat(53)), "cost below 4");
        assertFalse(BasicAuth.isBcryptHash("$2y$10$" + "a".repeat(52)));
        assertFalse(BasicAuth.isBcryptHash("$1$10$" + "a".repeat(53)));
    }
}
