package dev.infertop.metrics;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HeaderDigestsTest {
    private static final String HEADER = MetricsServerTest.basic("prometheus", "s3cret");

    @Test
    void aSaltedDigestOfTheHeaderNeverThePlainOne() throws Exception {
        byte[] salt = HeaderDigests.newSalt();
        byte[] otherSalt = HeaderDigests.newSalt();
        byte[] plain = MessageDigest.getInstance("SHA-256").digest(HEADER.getBytes(StandardCharsets.ISO_8859_1));
        assertEquals(16, salt.length);
        assertEquals(32, HeaderDigests.digest(salt, HEADER).length);
        assertArrayEquals(HeaderDigests.digest(salt, HEADER), HeaderDigests.digest(salt, HEADER));
        assertFalse(MessageDigest.isEqual(plain, HeaderDigests.digest(salt, HEADER)));
        assertFalse(MessageDigest.isEqual(HeaderDigests.digest(salt, HEADER), HeaderDigests.digest(otherSalt, HEADER)),
                "a salt of its own per run");
        assertFalse(MessageDigest.isEqual(HeaderDigests.digest(salt, HEADER), HeaderDigests.digest(salt, HEADER + " ")));
    }

    /** 16 held (the size basic auth remembers passes in); one more replaces the oldest; the same twice takes one slot. */
    @Test
    void atItsCapacityTheOldestIsReplaced() {
        HeaderDigests digests = new HeaderDigests(16);
        byte[] salt = HeaderDigests.newSalt();
        byte[][] made = new byte[17][];
        for (int i = 0; i < made.length; i++) {
            made[i] = HeaderDigests.digest(salt, MetricsServerTest.basic("user" + i, "pw"));
        }
        assertFalse(digests.contains(made[0]));
        for (int i = 0; i < 16; i++) {
            digests.add(made[i]);
            digests.add(made[i]);
        }
        assertEquals(16, digests.size());
        for (int i = 0; i < 16; i++) {
            assertTrue(digests.contains(made[i]), "slot " + i);
        }
        assertFalse(digests.contains(made[16]));
        digests.add(made[16]);
        assertEquals(16, digests.size());
        assertFalse(digests.contains(made[0]), "the oldest replaced");
        for (int i = 1; i < 17; i++) {
            assertTrue(digests.contains(made[i]), "digest " + i);
        }
        byte[] copy = made[5].clone();
        made[5][0] ^= 1;
        assertTrue(digests.contains(copy), "kept as a copy: the caller's array may change");
        assertFalse(digests.contains(made[5]));
    }
}
