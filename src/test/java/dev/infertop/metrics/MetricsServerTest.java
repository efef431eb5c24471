package dev.infertop.metrics;

import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsServerTest {
    /** What Prometheus 2.42 sends. */
    static final String PROMETHEUS_ACCEPT = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
            + "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    private static final String SCRAPE = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> notices = Collections.synchronizedList(new ArrayList<>());
    private MetricsServer server;

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
    }

    private HttpResponse<String> get(String path, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + server.address() + path))
                .timeout(Duration.ofSeconds(5));
        if (accept != null) {
            request.header("Accept", accept);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void formatFollowsTheAcceptHeader() {
        assertEquals(MetricsServer.Format.OPENMETRICS, MetricsServer.Format.forAccept(PROMETHEUS_ACCEPT));
        assertEquals(MetricsServer.Format.OPENMETRICS, MetricsServer.Format.forAccept(null));
        assertEquals(MetricsServer.Format.OPENMETRICS, MetricsServer.Format.forAccept("*/*"));
        assertEquals(MetricsServer.Format.PROMETHEUS_TEXT, MetricsServer.Format.forAccept("text/plain"));
        assertEquals(MetricsServer.Format.PROMETHEUS_TEXT,
                MetricsServer.Format.forAccept("text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5"));
        assertEquals(MetricsServer.Format.OPENMETRICS, MetricsServer.Format.forAccept("text/plain;q=0"));
    }

    @Test
    void servesTheLatestFrameOnLoopback() throws Exception {
        server = start(":" + freePort());
        assertTrue(server.address().startsWith("127.0.0.1:"), server.address());
        assertEquals("http://" + server.address() + "/metrics", server.url());
        HttpResponse<String> empty = get("/metrics", null);
        assertEquals(200, empty.statusCode());
        assertEquals("# EOF\n", empty.body());

        server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
        HttpResponse<String> openMetrics = get("/metrics", PROMETHEUS_ACCEPT);
        assertEquals("application/openmetrics-text; version=1.0.0; charset=utf-8",
                openMetrics.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(openMetrics.body().contains("\ninfertop_decode_tokens_total 69.0\n"), openMetrics.body());
        assertTrue(openMetrics.body().endsWith("# EOF\n"));

        HttpResponse<String> text = get("/metrics", "text/plain;version=0.0.4");
        assertEquals("text/plain; version=0.0.4; charset=utf-8", text.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(text.body().contains("\ninfertop_decode_tokens_total 69.0\n"), text.body());

        HttpResponse<String> index = get("/", null);
        assertEquals(200, index.statusCode());
        assertTrue(index.body().contains("<a href=\"/metrics\">"), index.body());
        assertEquals(404, get("/other", null).statusCode());
        HttpResponse<String> post = client.send(HttpRequest.newBuilder(URI.create("http://" + server.address() + "/metrics"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
    }

    @Test
    void aTakenPortIsOneLineSayingWhatToDo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            MetricsServer.ListenException e = assertThrows(MetricsServer.ListenException.class,
                    () -> start("127.0.0.1:" + taken.getLocalPort()));
            assertEquals("port " + taken.getLocalPort() + " is already taken (ss -ltnp shows by whom): choose another port",
                    e.getMessage());
        }
    }

    @Test
    void anUnresolvableHostIsOneLine() {
        MetricsServer.ListenException e = assertThrows(MetricsServer.ListenException.class,
                () -> start("no-such-host.invalid:9464"));
        assertTrue(e.getMessage().startsWith("cannot resolve 'no-such-host.invalid': "), e.getMessage());
    }

    private MetricsServer start(String address) throws MetricsServer.ListenException {
        return MetricsServer.start(ListenAddress.parse(address), null, notices::add);
    }

    /**
     * One client that sent "G" and nothing more, one that announced a 100-byte body and sent none, more of both
     * every half second, next to a scraper asking every 100 ms for 4 s: every scrape is answered, each within
     * 1 s. (With the JDK's server the first "G" held its only thread for good.)
     */
    @Test
    void stalledClientsNeverDelayAScrape() throws Exception {
        server = start(":" + freePort());
        server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
        int port = port(server);
        List<Socket> stalled = new ArrayList<>();
        long worstNs = 0;
        int scrapes = 0;
        try {
            long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
            long nextStall = 0;
            while (System.nanoTime() < end) {
                if (System.nanoTime() >= nextStall) {
                    stalled.add(send(port, "G"));
                    stalled.add(send(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"));
                    nextStall = System.nanoTime() + Duration.ofMillis(500).toNanos();
                }
                long started = System.nanoTime();
                String answer = exchange(port, SCRAPE, Duration.ofSeconds(1));
                worstNs = Math.max(worstNs, System.nanoTime() - started);
                assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer);
                assertTrue(answer.contains("\ninfertop_decode_tokens_total 69.0\n"), answer);
                scrapes++;
                Thread.sleep(100);
            }
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
        System.out.printf("MetricsServerTest: %d scrapes beside %d stalled clients, slowest %.1f ms%n", scrapes,
                stalled.size(), worstNs / 1e6);
        assertTrue(scrapes >= 20, scrapes + " scrapes");
        assertTrue(worstNs < Duration.ofSeconds(1).toNanos(), "slowest scrape " + worstNs / 1e6 + " ms");
    }

    /**
     * The deadline is for the whole head, not each read: one client silent after "G", one sending a byte every
     * 100 ms, are both closed at the 2 s head deadline (between 1.5 and 3.5 s).
     */
    @Test
    void aStalledHeadIsClosedAtItsDeadline() throws Exception {
        server = start(":" + freePort());
        int port = port(server);
        long started = System.nanoTime();
        try (Socket silent = send(port, "G"); Socket dripping = send(port, "G")) {
            silent.setSoTimeout(5000);
            dripping.setSoTimeout(100);
            long dripClosedNs = -1;
            String header = "ET /metrics HTTP/1.1\r\nX-Slow: " + "x".repeat(200);
            for (int i = 0; i < header.length() && dripClosedNs < 0; i++) {
                try {
                    dripping.getOutputStream().write(header.charAt(i));
                    if (dripping.getInputStream().read() < 0) {
                        dripClosedNs = System.nanoTime() - started;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    // 100 ms passed: the next byte
                } catch (SocketException closed) {
                    dripClosedNs = System.nanoTime() - started;
                }
            }
            long silentClosedNs = closedAfterNs(silent, started);
            System.out.printf("MetricsServerTest: silent client closed after %.0f ms, dripping one after %.0f ms%n",
                    silentClosedNs / 1e6, dripClosedNs / 1e6);
            for (long closedNs : new long[] {silentClosedNs, dripClosedNs}) {
                assertTrue(closedNs >= Duration.ofMillis(1500).toNanos() && closedNs <= Duration.ofMillis(3500).toNanos(),
                        "closed after " + closedNs / 1e6 + " ms");
            }
        }
    }

    /**
     * At most 12 of the 16 connections may be unchecked (a quarter kept for scrapes that passed), and one more
     * closes the oldest that waits for the rest of its head: 20 stalled clients and a scrape leave the 9 oldest
     * closed, the 11 newest open, and the scrape answered within 1 s.
     */
    @Test
    void pastTheConnectionCapTheOldestStalledClientGoes() throws Exception {
        ScrapeEndpoint.Limits limits = new ScrapeEndpoint.Limits(16, Duration.ofSeconds(10), Duration.ofSeconds(5));
        server = MetricsServer.start(ListenAddress.parse(":" + freePort()), null, notices::add, limits);
        int port = port(server);
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                stalled.add(send(port, "G"));
                Thread.sleep(5); // accepted in this order
            }
            long started = System.nanoTime();
            String answer = exchange(port, SCRAPE, Duration.ofSeconds(1));
            long tookNs = System.nanoTime() - started;
            assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer);
            for (int i = 0; i < 9; i++) {
                long closedNs = closedAfterNs(stalled.get(i), started);
                assertTrue(closedNs < Duration.ofSeconds(2).toNanos(), "stalled client " + i + " still open");
            }
            for (int i = 9; i < 20; i++) {
                Socket kept = stalled.get(i);
                kept.setSoTimeout(100);
                assertThrows(SocketTimeoutException.class, () -> kept.getInputStream().read(), "client " + i + " stays");
            }
            System.out.printf("MetricsServerTest: 20 stalled clients at a cap of 16 (12 unchecked): scrape answered "
                    + "in %.1f ms, the 9 oldest closed%n", tookNs / 1e6);
            assertTrue(tookNs < Duration.ofSeconds(1).toNanos());
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
    }

    /**
     * A client that asks and never reads is closed at the reply deadline (0.5 s here, 32 MiB it will not take),
     * and another scrape is answered meanwhile.
     */
    @Test
    void aClientThatDoesNotReadIsClosedAtTheReplyDeadline() throws Exception {
        byte[] big = new byte[32 << 20];
        ScrapeEndpoint.Limits limits = new ScrapeEndpoint.Limits(4, Duration.ofSeconds(2), Duration.ofMillis(500));
        try (ScrapeEndpoint endpoint = ScrapeEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                null, ScrapeEndpoint.Gate.OPEN, request -> request.path().equals("/big")
                        ? new ScrapeEndpoint.Response(200, "application/octet-stream", big, List.of())
                        : new ScrapeEndpoint.Response(200, "small\n"), limits);
             Socket reader = new Socket()) {
            reader.setReceiveBufferSize(4096);
            reader.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), endpoint.port()));
            long started = System.nanoTime();
            reader.getOutputStream().write("GET /big HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            Thread.sleep(100);
            assertEquals(1, endpoint.openConnections(), "answering, blocked on a full socket");
            assertTrue(exchange(endpoint.port(), "GET / HTTP/1.1\r\n\r\n", Duration.ofSeconds(1)).endsWith("small\n"));
            while (endpoint.openConnections() > 0 && System.nanoTime() - started < Duration.ofSeconds(5).toNanos()) {
                Thread.sleep(10);
            }
            long closedNs = System.nanoTime() - started;
            System.out.printf("MetricsServerTest: a client not reading its answer closed after %.0f ms%n",
                    closedNs / 1e6);
            assertEquals(0, endpoint.openConnections());
            assertTrue(closedNs >= Duration.ofMillis(400).toNanos() && closedNs < Duration.ofMillis(2000).toNanos(),
                    closedNs / 1e6 + " ms");
        }
    }

    /**
     * 16 clients sending wrong passwords (bcrypt cost 10), each a new one 10 ms after its answer, beside a scraper
     * whose password passed once: its 20 scrapes, one every 100 ms, are all answered 200 within 1 s, and the 16
     * got a handful of checks in all (401s; the rest 429, their address having failed lately, or 503). Before,
     * each wrong password held one of the 16 connections, as being answered, while it queued for the one check
     * at a time, and a scrape that found them all so was closed at once.
     */
    @Test
    void wrongPasswordsFailNoScrapeOfARememberedPassword(@TempDir Path directory) throws Exception {
        Path file = directory.resolve("web.yml");
        Files.writeString(file, "basic_auth_users:\n  prometheus: "
                + at.favre.lib.crypto.bcrypt.BCrypt.withDefaults().hashToString(10, "s3cret".toCharArray()) + "\n");
        server = MetricsServer.start(ListenAddress.parse(":" + freePort()), WebConfig.read(file), notices::add);
        server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
        int port = port(server);
        String scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + basic("prometheus", "s3cret")
                + "\r\n\r\n";
        assertTrue(exchange(port, scrape, Duration.ofSeconds(10)).startsWith("HTTP/1.1 200 OK\r\n"), "the first check");

        Map<String, java.util.concurrent.atomic.LongAdder> answers = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> guessers = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            int guesser = i;
            guessers.add(Thread.ofPlatform().daemon().start(() -> {
                for (int attempt = 0; !stop.get(); attempt++) {
                    String guess = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                            + basic("prometheus", "guess" + guesser + "-" + attempt) + "\r\n\r\n";
                    String status;
                    try {
                        String answer = exchange(port, guess, Duration.ofSeconds(10));
                        status = answer.length() >= 12 ? answer.substring(9, 12) : "closed";
                    } catch (IOException e) {
                        status = "closed";
                    }
                    answers.computeIfAbsent(status, key -> new java.util.concurrent.atomic.LongAdder()).increment();
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }));
        }
        List<String> failed = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (answers.values().stream().mapToLong(java.util.concurrent.atomic.LongAdder::sum).sum() < 16
                    && System.nanoTime() < deadline) {
                Thread.sleep(10); // every guesser at it
            }
            for (int i = 0; i < 20; i++) {
                String answer;
                try {
                    answer = exchange(port, scrape, Duration.ofSeconds(1));
                } catch (IOException e) {
                    answer = e.toString();
                }
                if (!answer.startsWith("HTTP/1.1 200 OK\r\n")) {
                    failed.add(answer.lines().findFirst().orElse("(closed with no answer)"));
                }
                Thread.sleep(100);
            }
        } finally {
            stop.set(true);
            for (Thread guesser : guessers) {
                guesser.join(15_000);
            }
        }
        Map<String, Long> counts = new java.util.TreeMap<>();
        answers.forEach((status, count) -> counts.put(status, count.sum()));
        System.out.printf("MetricsServerTest: 20 scrapes beside 16 wrong-password clients: %d failed %s; the clients' "
                + "answers %s%n", failed.size(), failed, counts);
        assertEquals(List.of(), failed, "scrapes that failed beside the guessers");
        // One address (loopback): two checks at once (the free failure and the one counted as it starts), then one
        // at 1, 3, 7, 15 s ... of the back-off: 6 in a run of under half a minute; 10 allows for a slow one.
        assertTrue(counts.getOrDefault("401", 0L) <= 10, "bcrypt checks for the guessers: " + counts);
    }

    @Test
    void headsThatAreNotHttpAreRefused() throws Exception {
        server = start(":" + freePort());
        int port = port(server);
        Duration second = Duration.ofSeconds(1);
        assertTrue(exchange(port, "HELLO\r\n\r\n", second).startsWith("HTTP/1.1 400 "));
        assertTrue(exchange(port, "GET /metrics HTTP/1.1\r\nX: " + "y".repeat(9000), second).startsWith("HTTP/1.1 431 "));
        String head = exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n", second);
        assertTrue(head.startsWith("HTTP/1.1 200 OK\r\n") && head.endsWith("\r\n\r\n"), head);
        assertTrue(exchange(port, "GET http://127.0.0.1/metrics?x=1 HTTP/1.1\nHost: a\n\n", second)
                .startsWith("HTTP/1.1 200 "), "absolute form, a query, bare LF line ends");
    }

    /** A render that fails answers 500 with a fixed body; the reason goes to stderr, once. */
    @Test
    void aFailedRenderTellsTheClientNothingOfWhy() throws Exception {
        server = start(":" + freePort());
        server.accept(new MetricsFrame(null, 0, "", Map.of())); // no snapshot: the mapping throws
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> failed = get("/metrics", null);
            assertEquals(500, failed.statusCode());
            assertEquals(MetricsServer.RENDER_FAILED, failed.body());
            assertFalse(failed.body().contains("Exception"), failed.body());
        }
        assertEquals(1, notices.size(), notices.toString());
        assertTrue(notices.getFirst().startsWith("infertop: metrics: cannot render them (scrapes get 500 while this "
                + "lasts): java.lang.NullPointerException"), notices.getFirst());
        server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
        assertEquals(200, get("/metrics", null).statusCode());
    }

    @Test
    void everyInterfaceIsSaidInOneLine(@TempDir Path directory) throws Exception {
        int port = freePort();
        server = start("0.0.0.0:" + port);
        assertEquals(List.of("infertop: --listen 0.0.0.0:" + port + " serves the metrics on every network interface, "
                + "in clear and to anyone: use 127.0.0.1:" + port + " for this machine only, or --web-config FILE for "
                + "TLS and basic auth"), notices);
        server.close();
        notices.clear();
        server = start("127.0.0.1:" + port);
        assertEquals(List.of(), notices);
        server.close();
        WebConfig both = WebConfig.read(webConfig(directory, TestTls.selfSigned(directory, "EC"), "alice", "secret"));
        server = MetricsServer.start(ListenAddress.parse("0.0.0.0:" + port), both, notices::add);
        assertEquals(List.of(), notices, "TLS and basic auth: exposed on purpose");
    }

    /** Not one thread of the exporter keeps the JVM alive (the JDK server's dispatcher did). */
    @Test
    void everyThreadIsADaemon() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        server = start(":" + freePort());
        server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
        int port = port(server);
        assertTrue(exchange(port, SCRAPE, Duration.ofSeconds(1)).startsWith("HTTP/1.1 200 "));
        List<String> notDaemons = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> !before.contains(thread) && thread.isAlive() && !thread.isDaemon())
                .map(Thread::getName).toList();
        assertEquals(List.of(), notDaemons);
        assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("infertop-metrics")
                && t.isDaemon()));
    }

    /** TLS (RSA and EC certificates) and basic auth: 401 with a challenge without the password, 200 with it. */
    @Test
    void tlsAndBasicAuthFromAWebConfig(@TempDir Path directory) throws Exception {
        for (String algorithm : List.of("RSA", "EC")) {
            TestTls.Pair tls = TestTls.selfSigned(directory, algorithm);
            WebConfig config = WebConfig.read(webConfig(directory, tls, "prometheus", "s3cret"));
            server = MetricsServer.start(ListenAddress.parse("127.0.0.1:" + freePort()), config, notices::add);
            server.accept(MetricsMappingTest.frame(Fixtures.snapshot(LayerStatus.State.ON)));
            assertEquals("https://" + server.address() + "/metrics", server.url());
            HttpClient https = HttpClient.newBuilder().sslContext(tls.trusting())
                    .connectTimeout(Duration.ofSeconds(5)).build();
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url())).timeout(Duration.ofSeconds(5));
            HttpResponse<String> anonymous = https.send(request.build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, anonymous.statusCode());
            assertEquals(BasicAuth.CHALLENGE, anonymous.headers().firstValue("WWW-Authenticate").orElseThrow());
            assertFalse(anonymous.body().contains("infertop_decode_tokens_total"));
            for (int i = 0; i < 2; i++) { // the second from the remembered check
                HttpResponse<String> scraped = https.send(request.copy()
                        .header("Authorization", basic("prometheus", "s3cret")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, scraped.statusCode(), algorithm);
                assertTrue(scraped.body().contains("\ninfertop_decode_tokens_total 69.0\n"));
            }
            assertEquals(401, https.send(request.copy().header("Authorization", basic("prometheus", "wrong")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(401, https.send(request.copy().header("Authorization", basic("nobody", "s3cret")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            // A third new one within a second of two failed checks from the same address: 429, back in 1 s.
            HttpResponse<String> soon = https.send(request.copy().header("Authorization", basic("prometheus", "third"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(429, soon.statusCode());
            assertEquals("1", soon.headers().firstValue("Retry-After").orElseThrow());
            assertEquals(401, https.send(request.copy().header("Authorization", basic("prometheus", "wrong")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "one that failed before: refused at once");
            // Plain HTTP to the TLS port: refused, and the endpoint goes on.
            int port = port(server);
            assertFalse(exchange(port, SCRAPE, Duration.ofSeconds(3)).startsWith("HTTP/1.1 200"));
            assertEquals(200, https.send(request.copy().header("Authorization", basic("prometheus", "s3cret")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            server.close();
            server = null;
        }
        assertEquals(List.of(), notices);
    }

    static Path webConfig(Path directory, TestTls.Pair tls, String user, String password) throws IOException {
        Path file = directory.resolve("web.yml");
        Files.writeString(file, """
                tls_server_config:
                  cert_file: %s
                  key_file: %s
                basic_auth_users:
                  %s: %s
                """.formatted(tls.certFile().getFileName(), tls.keyFile().getFileName(), user,
                at.favre.lib.crypto.bcrypt.BCrypt.withDefaults().hashToString(4, password.toCharArray())));
        return file;
    }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static int port(MetricsServer server) {
        return Integer.parseInt(server.address().substring(server.address().lastIndexOf(':') + 1));
    }

    /** A connection that sent {@code bytes} and waits. */
    private static Socket send(int port, String bytes) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Sends {@code request} on a new connection and reads the answer to the server's close, within {@code limit}. */
    private static String exchange(int port, String request, Duration limit) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        try (Socket socket = send(port, request)) {
            InputStream in = socket.getInputStream();
            java.io.ByteArrayOutputStream answer = new java.io.ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            while (true) {
                long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                if (leftMs <= 0) {
                    throw new SocketTimeoutException("no whole answer within " + limit.toMillis() + " ms: " + answer);
                }
                socket.setSoTimeout((int) leftMs);
                int read;
                try {
                    read = in.read(buffer);
                } catch (SocketException reset) {
                    break; // the server closed with our unread bytes pending: what came before stands
                }
                if (read < 0) {
                    break;
                }
                answer.write(buffer, 0, read);
            }
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** How long after {@code startedNs} the server closed {@code socket} (waiting at most 5 s). */
    private static long closedAfterNs(Socket socket, long startedNs) throws IOException {
        socket.setSoTimeout(5000);
        try {
            while (socket.getInputStream().read() >= 0) {
                // an answer (400, say) before the close
            }
        } catch (SocketTimeoutException open) {
            return Long.MAX_VALUE;
        } catch (SocketException reset) {
            // closed with our bytes unread: a reset
        }
        return System.nanoTime() - startedNs;
    }

    static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
