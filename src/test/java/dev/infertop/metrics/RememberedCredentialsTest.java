package dev.infertop.metrics;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RememberedCredentialsTest {
    private static final String HEADER = MetricsServerTest.basic("prometheus", "s3cret");

    @Test
    void aSaltedDigestOfTheHeaderNeverThePlainOne() throws Exception {
        RememberedCredentials one = new RememberedCredentials();
        RememberedCredentials other = new RememberedCredentials();
        byte[] plain = MessageDigest.getInstance("SHA-256").digest(HEADER.getBytes(StandardCharsets.ISO_8859_1));
        assertEquals(32, one.digest(HEADER).length);
        assertArrayEquals(one.digest(HEADER), one.digest(HEADER));
        assertFalse(MessageDigest.isEqual(plain, one.digest(HEADER)));
        assertFalse(MessageDigest.isEqual(one.digest(HEADER), other.digest(HEADER)), "a salt of its own per run");
        assertFalse(MessageDigest.isEqual(one.digest(HEADER), one.digest(HEADER + " ")));
    }

    /** 16 held; one more replaces the oldest; the same twice takes one slot; nothing else matches. */
    @Test
    void sixteenAtMostTheOldestReplaced() {
        RememberedCredentials remembered = new RememberedCredentials();
        assertEquals(16, RememberedCredentials.CAPACITY);
        byte[][] digests = new byte[17][];
        for (int i = 0; i < digests.length; i++) {
            digests[i] = remembered.digest(MetricsServerTest.basic("user" + i, "pw"));
        }
        assertFalse(remembered.contains(digests[0]));
        for (int i = 0; i < 16; i++) {
            remembered.add(digests[i]);
            remembered.add(digests[i]);
        }
        assertEquals(16, remembered.size());
        for (int i = 0; i < 16; i++) {
            assertTrue(remembered.contains(digests[i]), "slot " + i);
        }
        assertFalse(remembered.contains(digests[16]));
        remembered.add(digests[16]);
        assertEquals(16, remembered.size());
        assertFalse(remembered.contains(digests[0]), "the oldest replaced");
        for (int i = 1; i < 17; i++) {
            assertTrue(remembered.contains(digests[i]), "digest " + i);
        }
        byte[] copy = digests[5].clone();
        digests[5][0] ^= 1;
        assertTrue(remembered.contains(copy), "kept as a copy: the caller's array may change");
        assertFalse(remembered.contains(digests[5]));
    }
}
