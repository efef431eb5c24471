package dev.infertop.metrics;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ListenAddressTest {
    @Test
    void aBarePortMeansLoopbackNeverEveryInterface() throws Exception {
        ListenAddress address = ListenAddress.parse(":9464");
        assertNull(address.host());
        assertEquals(9464, address.port());
        assertTrue(address.resolve().isLoopbackAddress());
    }

    @Test
    void hostsAndBracketedIpv6Addresses() throws Exception {
        assertEquals("127.0.0.1", ListenAddress.parse("127.0.0.1:9464").host());
        assertEquals("0.0.0.0", ListenAddress.parse("0.0.0.0:1").host());
        ListenAddress v6 = ListenAddress.parse("[::1]:65535");
        assertEquals("::1", v6.host());
        assertEquals(65535, v6.port());
        assertEquals(InetAddress.getByName("::1"), v6.resolve());
        assertEquals("localhost", ListenAddress.parse("localhost:9464").host());
    }

    @Test
    void malformedAddressesSayWhatToGive() {
        assertEquals("give HOST:PORT: :9464 for port 9464 on loopback, or e.g. 127.0.0.1:9464", problem("9464"));
        assertEquals("no port: give HOST:PORT, e.g. 127.0.0.1:9464, or :9464 for loopback", problem("localhost"));
        assertEquals("an IPv6 address goes in brackets, e.g. [::1]:9464", problem("::1:9464"));
        assertEquals("an IPv6 address goes in brackets, e.g. [::1]:9464", problem("[::1:9464"));
        for (String port : new String[] {"", "0", "65536", "99999999999", "-1", "http", "+80"}) {
            assertTrue(problem("127.0.0.1:" + port).startsWith("the port '" + port + "' is not a number from 1 to 65535"),
                    port);
        }
        assertTrue(problem("a b:9464").contains("is not a host name or address"));
        assertTrue(problem("").startsWith("no address"));
    }

    private static String problem(String text) {
        return assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse(text)).getMessage();
    }
}
