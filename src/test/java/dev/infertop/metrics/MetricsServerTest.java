package dev.infertop.metrics;

import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsServerTest {
    /** What Prometheus 2.42 sends. */
    static final String PROMETHEUS_ACCEPT = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
            + "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
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
        server = MetricsServer.start(ListenAddress.parse(":" + freePort()));
        assertTrue(server.address().startsWith("127.0.0.1:"), server.address());
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

        assertEquals(404, get("/", null).statusCode());
        HttpResponse<String> post = client.send(HttpRequest.newBuilder(URI.create("http://" + server.address() + "/metrics"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
    }

    @Test
    void aTakenPortIsOneLineSayingWhatToDo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            MetricsServer.ListenException e = assertThrows(MetricsServer.ListenException.class,
                    () -> MetricsServer.start(ListenAddress.parse("127.0.0.1:" + taken.getLocalPort())));
            assertEquals("port " + taken.getLocalPort() + " is already taken (ss -ltnp shows by whom): choose another port",
                    e.getMessage());
        }
    }

    @Test
    void anUnresolvableHostIsOneLine() {
        MetricsServer.ListenException e = assertThrows(MetricsServer.ListenException.class,
                () -> MetricsServer.start(ListenAddress.parse("no-such-host.invalid:9464")));
        assertTrue(e.getMessage().startsWith("cannot resolve 'no-such-host.invalid': "), e.getMessage());
    }

    static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
