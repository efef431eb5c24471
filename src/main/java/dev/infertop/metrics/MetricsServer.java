package dev.infertop.metrics;

import dev.infertop.model.SafeText;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * {@code --listen}: serves {@code /metrics} from the last frame the collector handed over (a volatile
 * reference), on {@link ScrapeEndpoint} (deadlines, a connection cap, daemon threads: no client slows another's
 * scrape), with TLS and basic auth when a {@link WebConfig} asks for them. A scrape never touches the collector
 * or waits for it: it reads that frame, builds the client library's snapshots over it (a {@link MultiCollector}
 * in a registry of its own) and writes them with the library's writers, OpenMetrics text unless the scrape's
 * {@code Accept} prefers the Prometheus text format. The rendered bytes are kept per frame and format: a
 * second scrape of the same tick costs a copy. Lives across the targets of {@code --follow}.
 */
public final class MetricsServer implements AutoCloseable, Consumer<MetricsFrame> {
    /** The exposition formats, with the library's writers. */
    enum Format {
        OPENMETRICS(OpenMetricsTextFormatWriter.builder().setCreatedTimestampsEnabled(true).build()),
        PROMETHEUS_TEXT(PrometheusTextFormatWriter.create());

        final ExpositionFormatWriter writer;

        Format(ExpositionFormatWriter writer) {
            this.writer = writer;
        }

        /**
         * OpenMetrics (what Prometheus asks for first), unless {@code accept} rates text/plain above it or
         * does not name it at all while naming text/plain (an old scraper, {@code curl -H 'Accept: text/plain'}).
         * No header or {@code *}/{@code *}: OpenMetrics.
         */
        static Format forAccept(String accept) {
            if (accept == null || accept.isBlank()) {
                return OPENMETRICS;
            }
            double openMetrics = -1;
            double text = -1;
            for (String range : accept.split(",")) {
                String[] parts = range.split(";");
                String type = parts[0].strip().toLowerCase(Locale.ROOT);
                double q = 1;
                for (int i = 1; i < parts.length; i++) {
                    String parameter = parts[i].strip().toLowerCase(Locale.ROOT);
                    if (parameter.startsWith("q=")) {
                        try {
                            q = Double.parseDouble(parameter.substring(2));
                        } catch (NumberFormatException e) {
                            q = 0;
                        }
                    }
                }
                if (type.equals("application/openmetrics-text")) {
                    openMetrics = Math.max(openMetrics, q);
                } else if (type.equals("text/plain")) {
                    text = Math.max(text, q);
                }
            }
            return text > 0 && text > openMetrics ? PROMETHEUS_TEXT : OPENMETRICS;
        }
    }

    private record Rendered(MetricsFrame frame, byte[] body) {}

    /** What a failed render answers: the reason goes to infertop's standard error, never to a client. */
    static final String RENDER_FAILED = "infertop could not render its metrics; the reason is on its standard error\n";

    /** What / answers: a link to the metrics. */
    private static final byte[] INDEX = """
            <!DOCTYPE html>
            <html><head><title>infertop</title></head>
            <body><h1>infertop</h1><p><a href="/metrics">Metrics</a></p></body></html>
            """.getBytes(StandardCharsets.UTF_8);

    private final ScrapeEndpoint endpoint;
    private final BasicAuth auth;
    private final Consumer<String> notices;
    private final AtomicBoolean renderFailureSaid = new AtomicBoolean();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private volatile MetricsFrame latest;
    /** One scrape renders at a time (the rest wait a few milliseconds, then reuse its bytes). */
    private final ReentrantLock renderLock = new ReentrantLock();
    /** The frame the scrape being rendered reads (under renderLock): one frame per exposition, even mid-tick. */
    private MetricsFrame rendering;
    /** Guarded by renderLock. */
    private final Rendered[] rendered = new Rendered[Format.values().length];
    private final String address;
    private final String url;

    private MetricsServer(ScrapeEndpoint.Limits limits, InetAddress host, int port, WebConfig webConfig,
                          Consumer<String> notices) throws IOException {
        this.notices = notices;
        this.auth = webConfig == null ? null : webConfig.auth();
        registry.register((MultiCollector) () -> MetricsMapping.snapshots(rendering));
        endpoint = ScrapeEndpoint.start(new InetSocketAddress(host, port),
                webConfig == null ? null : webConfig.socketFactory(),
                auth == null ? ScrapeEndpoint.Gate.OPEN : this::refusal, this::handle, limits);
        address = (host.getAddress().length == 16 ? "[" + host.getHostAddress() + "]" : host.getHostAddress())
                + ":" + endpoint.port();
        url = (webConfig != null && webConfig.tls() ? "https://" : "http://") + address + "/metrics";
    }

    /**
     * Binds {@code address} and starts serving (an empty exposition until the first frame). A wildcard address
     * (every interface) without both TLS and basic auth is said in one line on {@code notices}.
     *
     * @param webConfig TLS and basic auth, or null for neither
     * @param notices   where the wildcard warning and a render failure (once) are said: infertop's stderr
     * @throws ListenException what is wrong and what to do, in one line
     */
    public static MetricsServer start(ListenAddress address, WebConfig webConfig, Consumer<String> notices)
            throws ListenException {
        return start(address, webConfig, notices, ScrapeEndpoint.Limits.DEFAULT);
    }

    static MetricsServer start(ListenAddress address, WebConfig webConfig, Consumer<String> notices,
                               ScrapeEndpoint.Limits limits) throws ListenException {
        InetAddress host;
        try {
            host = address.resolve();
        } catch (UnknownHostException | SecurityException e) {
            throw new ListenException("cannot resolve '" + address.host() + "': give an IP address (127.0.0.1, [::1], "
                    + "or 0.0.0.0 for every interface) or a name this machine resolves");
        }
        MetricsServer server;
        try {
            server = new MetricsServer(limits, host, address.port(), webConfig, notices);
        } catch (BindException e) {
            String why = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            if (why.contains("in use")) {
                throw new ListenException("port " + address.port() + " is already taken (ss -ltnp shows by whom): "
                        + "choose another port");
            }
            if (why.contains("assign")) {
                throw new ListenException(host.getHostAddress() + " is not an address of this machine: use "
                        + "127.0.0.1, or one that ip address shows");
            }
            if (why.contains("permission")) {
                throw new ListenException("not allowed to listen on port " + address.port()
                        + " (ports below 1024 need CAP_NET_BIND_SERVICE): choose a port from 1024 up");
            }
            throw new ListenException("cannot listen on " + host.getHostAddress() + " port " + address.port() + ": "
                    + e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw new ListenException("cannot listen on " + host.getHostAddress() + " port " + address.port() + ": "
                    + e.getMessage());
        }
        if (host.isAnyLocalAddress() && (webConfig == null || !webConfig.tls() || !webConfig.basicAuth())) {
            notices.accept("infertop: --listen " + address.text() + " serves the metrics on every network interface"
                    + (webConfig == null ? ", in clear and to anyone" : webConfig.tls() ? ", to anyone" : ", in clear")
                    + ": use 127.0.0.1:" + address.port() + " for this machine only, or --web-config FILE for "
                    + "TLS and basic auth");
        }
        return server;
    }

    /** Where it listens, as HOST:PORT (the address bound). */
    public String address() {
        return address;
    }

    /** The metrics' URL: http:// or, with TLS, https://HOST:PORT/metrics. */
    public String url() {
        return url;
    }

    /** The collector's hand-over: the latest frame replaces the one before. Any thread; never blocks. */
    @Override
    public void accept(MetricsFrame frame) {
        latest = frame;
    }

    /** The exposition of the latest frame in {@code format} (what a scrape gets). Any thread. */
    byte[] render(Format format) throws IOException {
        renderLock.lock();
        try {
            MetricsFrame frame = latest;
            Rendered last = rendered[format.ordinal()];
            if (last != null && last.frame() == frame) {
                return last.body();
            }
            rendering = frame;
            MetricSnapshots snapshots = registry.scrape();
            ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
            format.writer.write(body, snapshots);
            byte[] bytes = body.toByteArray();
            rendered[format.ordinal()] = new Rendered(frame, bytes);
            return bytes;
        } finally {
            renderLock.unlock();
        }
    }

    /** Basic auth, before the request counts as being answered: null when it passed. */
    private ScrapeEndpoint.Response refusal(RequestHead request, InetAddress client) {
        BasicAuth.Outcome outcome = auth.check(request.header("authorization"), client);
        return switch (outcome.verdict()) {
            case PASSED -> null;
            case REFUSED -> new ScrapeEndpoint.Response(401, "text/plain; charset=utf-8",
                    "infertop: give the user and password of --web-config's basic_auth_users\n"
                            .getBytes(StandardCharsets.UTF_8),
                    List.of("WWW-Authenticate: " + BasicAuth.CHALLENGE));
            case BACKING_OFF -> new ScrapeEndpoint.Response(429, "text/plain; charset=utf-8",
                    ("infertop: a password from this address failed lately: try again in "
                            + outcome.retryAfterSeconds() + " s\n").getBytes(StandardCharsets.UTF_8),
                    List.of("Retry-After: " + outcome.retryAfterSeconds()));
            case BUSY -> new ScrapeEndpoint.Response(503, "text/plain; charset=utf-8",
                    "infertop: busy checking other passwords: try again shortly\n".getBytes(StandardCharsets.UTF_8),
                    List.of("Retry-After: " + outcome.retryAfterSeconds()));
        };
    }

    /** One request that passed the gate, on its connection's thread. */
    private ScrapeEndpoint.Response handle(RequestHead request) {
        String method = request.method();
        boolean metrics = request.path().equals("/metrics");
        if (!metrics && !request.path().equals("/")) {
            return new ScrapeEndpoint.Response(404, "infertop serves its metrics at /metrics\n");
        }
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return new ScrapeEndpoint.Response(405, "text/plain; charset=utf-8",
                    "GET /metrics\n".getBytes(StandardCharsets.UTF_8), List.of("Allow: GET, HEAD"));
        }
        if (!metrics) {
            return new ScrapeEndpoint.Response(200, "text/html; charset=utf-8", INDEX, List.of());
        }
        Format format = Format.forAccept(request.header("accept"));
        try {
            return new ScrapeEndpoint.Response(200, format.writer.getContentType(), render(format), List.of());
        } catch (IOException | RuntimeException e) {
            if (renderFailureSaid.compareAndSet(false, true)) {
                notices.accept("infertop: metrics: cannot render them (scrapes get 500 while this lasts): "
                        + SafeText.of(e.toString()));
            }
            return new ScrapeEndpoint.Response(500, RENDER_FAILED);
        }
    }

    /** Stops listening and drops every connection at once (a scrape in progress is cut off). Idempotent. */
    @Override
    public void close() {
        endpoint.close();
    }

    /** Why {@code --listen} cannot be served: one line, what is wrong and what to do. */
    public static final class ListenException extends Exception {
        public ListenException(String message) {
            super(message);
        }
    }
}
