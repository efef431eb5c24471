package dev.infertop.metrics;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * The back-off of basic auth: failed password checks per client address. The first {@link #FREE_FAILURES} in a
 * row cost no wait (a typo; a scraper with a stale password beside one with the right one on the same host);
 * after {@code n} more than that, the address's next check may start
 * {@code min(FIRST_WAIT × 2^(n−FREE_FAILURES−1), LONGEST_WAIT)} after the last one (1, 2, 4, 8, 16, 30, 30 s
 * ...); a check that passes clears the address, and a failure more than {@link #FORGET_NS} after the one before
 * counts from one again. An IPv6 address counts by its /64 (one holder
 * gets a whole /64 and can pick any address in it); an IPv4 address by itself.
 *
 * <p>Fixed size: at most {@link #CAPACITY} addresses; a failure from one more forgets the address whose last
 * failure is oldest (a guesser with more addresses than that gets no back-off from them, only the one-check-at-a-time
 * of {@link BasicAuth}). Not thread-safe: its owner locks.
 */
final class FailedChecks {
    static final int CAPACITY = 256;
    static final int FREE_FAILURES = 1;
    static final long FIRST_WAIT_NS = 1_000_000_000L;
    static final long LONGEST_WAIT_NS = 30_000_000_000L;
    static final long FORGET_NS = 15 * 60 * 1_000_000_000L;

    /** An IPv4 address, or an IPv6 address's first 64 bits. */
    record Prefix(boolean v6, long bits) {
        static Prefix of(InetAddress address) {
            byte[] bytes = address.getAddress();
            long bits = 0;
            for (int i = 0; i < Math.min(bytes.length, 8); i++) {
                bits = bits << 8 | (bytes[i] & 0xff);
            }
            return new Prefix(address instanceof Inet6Address, bits);
        }
    }

    private static final class Entry {
        int failures;
        long lastNs;
    }

    /** In the order of each address's last failure (a failure moves its address to the end). */
    private final LinkedHashMap<Prefix, Entry> entries = new LinkedHashMap<>();

    /** How long {@code client} must wait before its next check may start: 0 when it may start now. */
    long waitNanos(InetAddress client, long nowNs) {
        Entry entry = entries.get(Prefix.of(client));
        if (entry == null) {
            return 0;
        }
        return Math.max(0, entry.lastNs + waitAfter(entry.failures) - nowNs);
    }

    /** A check from {@code client} failed (or started: it is cleared if it passes) at {@code nowNs}. */
    void failed(InetAddress client, long nowNs) {
        Prefix prefix = Prefix.of(client);
        Entry entry = entries.remove(prefix);
        if (entry == null) {
            if (entries.size() >= CAPACITY) {
                Iterator<Entry> oldest = entries.values().iterator();
                oldest.next();
                oldest.remove();
            }
            entry = new Entry();
        } else if (nowNs - entry.lastNs > FORGET_NS) {
            entry.failures = 0;
        }
        entry.failures = Math.min(entry.failures + 1, 64);
        entry.lastNs = nowNs;
        entries.put(prefix, entry);
    }

    /** A check from {@code client} passed: it starts afresh. */
    void passed(InetAddress client) {
        entries.remove(Prefix.of(client));
    }

    /** Addresses held (tests). */
    int size() {
        return entries.size();
    }

    /** The wait after {@code failures} failed checks in a row. */
    static long waitAfter(int failures) {
        if (failures <= FREE_FAILURES) {
            return 0;
        }
        int doublings = Math.min(failures - FREE_FAILURES - 1, 30);
        return Math.min(FIRST_WAIT_NS << doublings, LONGEST_WAIT_NS);
    }
}
