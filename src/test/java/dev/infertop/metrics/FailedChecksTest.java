package dev.infertop.metrics;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FailedChecksTest {
    private static final long SECOND_NS = 1_000_000_000L;

    private static InetAddress address(String literal) throws Exception {
        return InetAddress.getByName(literal);
    }

    @Test
    void theFirstFailureIsFreeThenTheWaitDoublesFromOneSecondUpToThirty() {
        List<Long> waitsSeconds = new ArrayList<>();
        for (int failures = 1; failures <= 9; failures++) {
            waitsSeconds.add(FailedChecks.waitAfter(failures) / SECOND_NS);
        }
        assertEquals(List.of(0L, 1L, 2L, 4L, 8L, 16L, 30L, 30L, 30L), waitsSeconds);
        assertEquals(30 * SECOND_NS, FailedChecks.waitAfter(64), "no overflow");
    }

    /** Two failures in a row at {@code nowNs}: the free one and the first that costs 1 s. */
    private static void twice(FailedChecks failures, InetAddress client, long nowNs) {
        failures.failed(client, nowNs);
        failures.failed(client, nowNs);
    }

    @Test
    void anAddressWaitsFromItsLastFailureUntilItPasses() throws Exception {
        FailedChecks failures = new FailedChecks();
        InetAddress client = address("192.0.2.1");
        assertEquals(0, failures.waitNanos(client, 0));
        failures.failed(client, 99 * SECOND_NS);
        assertEquals(0, failures.waitNanos(client, 99 * SECOND_NS), "the first is free");
        failures.failed(client, 100 * SECOND_NS);
        assertEquals(SECOND_NS, failures.waitNanos(client, 100 * SECOND_NS));
        assertEquals(SECOND_NS / 4, failures.waitNanos(client, 100 * SECOND_NS + 3 * SECOND_NS / 4));
        assertEquals(0, failures.waitNanos(client, 101 * SECOND_NS));
        failures.failed(client, 101 * SECOND_NS);
        assertEquals(2 * SECOND_NS, failures.waitNanos(client, 101 * SECOND_NS));
        failures.failed(client, 103 * SECOND_NS);
        assertEquals(4 * SECOND_NS, failures.waitNanos(client, 103 * SECOND_NS));
        assertEquals(0, failures.waitNanos(address("192.0.2.2"), 103 * SECOND_NS), "another address");

        failures.passed(client);
        assertEquals(0, failures.waitNanos(client, 103 * SECOND_NS));
        assertEquals(0, failures.size());
        failures.failed(client, 104 * SECOND_NS);
        assertEquals(0, failures.waitNanos(client, 104 * SECOND_NS), "counted from one again: free");
        failures.failed(client, 104 * SECOND_NS);
        assertEquals(SECOND_NS, failures.waitNanos(client, 104 * SECOND_NS));
    }

    @Test
    void aFailureLongAfterTheLastCountsFromOne() throws Exception {
        FailedChecks failures = new FailedChecks();
        InetAddress client = address("192.0.2.1");
        for (int i = 0; i < 5; i++) {
            failures.failed(client, i * 20 * SECOND_NS);
        }
        assertEquals(8 * SECOND_NS, failures.waitNanos(client, 80 * SECOND_NS));
        long late = 80 * SECOND_NS + FailedChecks.FORGET_NS;
        failures.failed(client, late);
        assertEquals(16 * SECOND_NS, failures.waitNanos(client, late), "exactly FORGET_NS later: the sixth");
        long later = late + FailedChecks.FORGET_NS + 1;
        failures.failed(client, later);
        assertEquals(0, failures.waitNanos(client, later), "the first again");
        failures.failed(client, later);
        assertEquals(SECOND_NS, failures.waitNanos(client, later));
    }

    @Test
    void ipv6CountsByItsSlash64AndIpv4ByItself() throws Exception {
        FailedChecks failures = new FailedChecks();
        twice(failures, address("2001:db8:1:2::1"), 0);
        assertEquals(SECOND_NS, failures.waitNanos(address("2001:db8:1:2:ffff:ffff:ffff:ffff"), 0), "same /64");
        assertEquals(0, failures.waitNanos(address("2001:db8:1:3::1"), 0), "next /64");
        twice(failures, address("198.51.100.1"), 0);
        assertEquals(SECOND_NS, failures.waitNanos(address("::ffff:198.51.100.1"), 0), "IPv4-mapped is IPv4");
        assertEquals(0, failures.waitNanos(address("198.51.100.2"), 0));
        twice(failures, address("::"), 0);
        assertEquals(0, failures.waitNanos(address("0.0.0.0"), 0), "IPv4 and IPv6 apart, same bits or not");
        assertEquals(3, failures.size());
    }

    /**
     * 256 addresses are held; a 257th forgets the one whose last failure is oldest; a new failure makes an
     * address the newest again.
     */
    @Test
    void atItsCapacityTheOldestLastFailureIsForgotten() throws Exception {
        FailedChecks failures = new FailedChecks();
        assertEquals(256, FailedChecks.CAPACITY);
        for (int i = 0; i < 256; i++) {
            twice(failures, address("10.0." + i / 256 + "." + i), i);
        }
        assertEquals(256, failures.size());
        failures.failed(address("10.0.0.1"), 300); // 10.0.0.1 is now the newest
        twice(failures, address("10.1.0.0"), 301);
        assertEquals(256, failures.size());
        assertEquals(0, failures.waitNanos(address("10.0.0.0"), 301), "the oldest is forgotten");
        assertEquals(2 * SECOND_NS, failures.waitNanos(address("10.0.0.1"), 300), "failed again: kept");
        twice(failures, address("10.1.0.1"), 302);
        assertEquals(0, failures.waitNanos(address("10.0.0.2"), 302), "then the next oldest");
        assertEquals(SECOND_NS + 3 - 302, failures.waitNanos(address("10.0.0.3"), 302));
        assertEquals(256, failures.size());
    }
}
