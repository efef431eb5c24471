package dev.infertop.metrics;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * {@code --listen HOST:PORT} as given: a host name or address ({@code [..]} around an IPv6 one), or none for
 * loopback ({@code :9464}); every interface only when the user names one ({@code 0.0.0.0:9464},
 * {@code [::]:9464}). Parsed when the options are read; resolved when the server starts.
 *
 * @param host the host as written, brackets removed; null for loopback
 */
public record ListenAddress(String host, int port, String text) {
    /** Parses {@code text}; the exception's message says what is wrong and what to give instead. */
    public static ListenAddress parse(String text) {
        String example = "e.g. 127.0.0.1:9464, or :9464 for loopback";
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("no address: give HOST:PORT, " + example);
        }
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(text.chars().allMatch(c -> c >= '0' && c <= '9')
                    ? "give HOST:PORT: :" + text + " for port " + text + " on loopback, or e.g. 127.0.0.1:" + text
                    : "no port: give HOST:PORT, " + example);
        }
        String host = text.substring(0, colon);
        String port = text.substring(colon + 1);
        if (host.startsWith("[")) {
            if (!host.endsWith("]") || host.length() < 3) {
                throw new IllegalArgumentException("an IPv6 address goes in brackets, e.g. [::1]:9464");
            }
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("an IPv6 address goes in brackets, e.g. [::1]:9464");
        }
        if (host.chars().anyMatch(c -> c <= ' ' || c == 0x7f || c == '/')) {
            throw new IllegalArgumentException("'" + host + "' is not a host name or address: give HOST:PORT, "
                    + example);
        }
        int number;
        try {
            number = port.chars().allMatch(c -> c >= '0' && c <= '9') && !port.isEmpty() && port.length() <= 5
                    ? Integer.parseInt(port) : -1;
        } catch (NumberFormatException e) {
            number = -1;
        }
        if (number < 1 || number > 65535) {
            throw new IllegalArgumentException("the port '" + port + "' is not a number from 1 to 65535: give HOST:PORT, "
                    + example);
        }
        return new ListenAddress(host.isEmpty() ? null : host, number, text);
    }

    /** The address to bind: loopback when no host was given. */
    public InetAddress resolve() throws UnknownHostException {
        return host == null ? InetAddress.getLoopbackAddress() : InetAddress.getByName(host);
    }
}
