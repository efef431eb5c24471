package dev.infertop.metrics;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * An HTTP/1.x request head as a scrape client sent it: untrusted, so read within {@link #MAX_BYTES} and parsed
 * without trusting any count in it. The body, if the client announced one, is never read: every answer closes
 * the connection.
 *
 * @param method  as sent (case matters in HTTP)
 * @param path    the target's path, without its query, an absolute-form target's scheme and authority removed
 * @param headers the first value of each header, by lower-case name
 */
record RequestHead(String method, String path, Map<String, String> headers) {
    /** A head (request line and headers) longer than this is refused (431). */
    static final int MAX_BYTES = 8 * 1024;
    static final int MAX_HEADERS = 64;

    RequestHead {
        headers = Map.copyOf(headers);
    }

    /** The first value of header {@code name} (lower case), or null. */
    String header(String name) {
        return headers.get(name);
    }

    /**
     * The head in {@code bytes[0, length)}, which ends with its empty line ({@link #end}).
     *
     * @throws IllegalArgumentException a head that is not HTTP/1.x: say 400
     */
    static RequestHead parse(byte[] bytes, int length) {
        // ISO-8859-1 maps each byte to one char: header values are opaque octets (RFC 9110 5.5).
        String text = new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
        String[] lines = text.split("\r?\n", -1);
        String[] requestLine = lines[0].split(" ", -1);
        if (requestLine.length != 3 || requestLine[0].isEmpty() || requestLine[1].isEmpty()
                || !requestLine[2].matches("HTTP/1\\.[0-9]")) {
            throw new IllegalArgumentException("not an HTTP/1.x request line");
        }
        String method = requestLine[0];
        for (int i = 0; i < method.length(); i++) {
            char c = method.charAt(i);
            if (c <= ' ' || c >= 0x7f) {
                throw new IllegalArgumentException("not a method");
            }
        }
        Map<String, String> headers = new HashMap<>();
        int count = 0;
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            if (line.isEmpty()) {
                break; // the empty line that ends the head
            }
            if (++count > MAX_HEADERS) {
                throw new IllegalArgumentException("too many headers");
            }
            int colon = line.indexOf(':');
            if (colon <= 0 || line.charAt(0) == ' ' || line.charAt(0) == '\t') {
                throw new IllegalArgumentException("not a header line"); // obsolete line folding included
            }
            String name = line.substring(0, colon);
            for (int j = 0; j < name.length(); j++) {
                char c = name.charAt(j);
                if (c <= ' ' || c >= 0x7f) {
                    throw new IllegalArgumentException("not a header name");
                }
            }
            headers.putIfAbsent(name.toLowerCase(Locale.ROOT), line.substring(colon + 1).strip());
        }
        return new RequestHead(method, path(requestLine[1]), headers);
    }

    /** origin-form /a?b → /a; absolute-form http://host:port/a → /a; anything else as it is (a 404). */
    private static String path(String target) {
        String path = target;
        int scheme = path.indexOf("://");
        if (scheme > 0 && !path.startsWith("/")) {
            int slash = path.indexOf('/', scheme + 3);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        int query = path.indexOf('?');
        return query < 0 ? path : path.substring(0, query);
    }

    /**
     * Where the head in {@code bytes[0, length)} ends (the index after its empty line), or -1 while it has not
     * ended; bytes before {@code from} were looked at before. Lines end in CRLF, or LF alone (RFC 9112 2.2 lets
     * a server accept it).
     */
    static int end(byte[] bytes, int from, int length) {
        for (int i = Math.max(0, from - 3); i < length; i++) {
            if (bytes[i] == '\n') {
                if (i + 1 < length && bytes[i + 1] == '\n') {
                    return i + 2;
                }
                if (i + 2 < length && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') {
                    return i + 3;
                }
            }
        }
        return -1;
    }
}
