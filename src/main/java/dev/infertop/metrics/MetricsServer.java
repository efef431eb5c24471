package dev.infertop.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * {@code --listen}: serves {@code /metrics} from the last frame the collector handed over (a volatile
 * reference), on one thread of its own, with the JDK's HTTP server. A scrape never touches the collector or
 * waits for it: it reads that frame, builds the client library's snapshots over it (a {@link MultiCollector}
 * in a registry of its own) and writes them with the library's writers, OpenMetrics text unless the scrape's
 * {@code Accept} prefers the Prometheus text format. The rendered bytes are kept per frame and format: a
 * second scrape of the same tick costs a copy. Lives across the targets of {@code --follow}.
 */
public final class MetricsServer implements AutoCloseable, Consumer<MetricsFrame> {
    private static final int BACKLOG = 16;

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

    private final HttpServer http;
    private final ExecutorService executor;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private volatile MetricsFrame latest;
    /** The frame the scrape being rendered reads (server thread): one frame per exposition, even mid-tick. */
    private MetricsFrame rendering;
    /** Only the server's thread touches these. */
    private final Rendered[] rendered = new Rendered[Format.values().length];
    private final String address;

    private MetricsServer(HttpServer http, ExecutorService executor, String address) {
        this.http = http;
        this.executor = executor;
        this.address = address;
        registry.register((MultiCollector) () -> MetricsMapping.snapshots(rendering));
    }

    /**
     * Binds {@code address} and starts serving (an empty exposition until the first frame).
     *
     * @throws ListenException what is wrong and what to do, in one line
     */
    public static MetricsServer start(ListenAddress address) throws ListenException {
        InetAddress host;
        try {
            host = address.resolve();
        } catch (UnknownHostException | SecurityException e) {
            throw new ListenException("cannot resolve '" + address.host() + "': give an IP address (127.0.0.1, [::1], "
                    + "or 0.0.0.0 for every interface) or a name this machine resolves");
        }
        HttpServer http;
        try {
            http = HttpServer.create(new InetSocketAddress(host, address.port()), BACKLOG);
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
        ExecutorService executor = Executors.newSingleThreadExecutor(runnable ->
                Thread.ofPlatform().name("infertop-metrics").daemon().unstarted(runnable));
        MetricsServer server = new MetricsServer(http, executor,
                (host.getAddress().length == 16 ? "[" + host.getHostAddress() + "]" : host.getHostAddress())
                        + ":" + http.getAddress().getPort());
        http.createContext("/", server::handle);
        http.setExecutor(executor);
        http.start();
        return server;
    }

    /** Where it listens, as HOST:PORT (the address bound). */
    public String address() {
        return address;
    }

    /** The collector's hand-over: the latest frame replaces the one before. Any thread; never blocks. */
    @Override
    public void accept(MetricsFrame frame) {
        latest = frame;
    }

    /** The exposition of the latest frame in {@code format} (what a scrape gets). Server thread, or tests. */
    byte[] render(Format format) throws IOException {
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
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!exchange.getRequestURI().getPath().equals("/metrics")) {
                reply(exchange, 404, "text/plain; charset=utf-8",
                        "infertop serves its metrics at /metrics\n".getBytes(StandardCharsets.UTF_8), method);
                return;
            }
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(exchange, 405, "text/plain; charset=utf-8",
                        "GET /metrics\n".getBytes(StandardCharsets.UTF_8), method);
                return;
            }
            Format format = Format.forAccept(exchange.getRequestHeaders().getFirst("Accept"));
            byte[] body;
            try {
                body = render(format);
            } catch (RuntimeException e) {
                reply(exchange, 500, "text/plain; charset=utf-8",
                        ("infertop: cannot render metrics: " + e + "\n").getBytes(StandardCharsets.UTF_8), method);
                return;
            }
            reply(exchange, 200, format.writer.getContentType(), body, method);
        } catch (IOException e) {
            // the scraper went away mid-reply: nothing to do, the next scrape starts afresh
        }
    }

    private static void reply(HttpExchange exchange, int status, String contentType, byte[] body, String method)
            throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        if (method.equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /** Stops listening at once (a scrape in progress is cut off). Idempotent. */
    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
    }

    /** Why {@code --listen} cannot be served: one line, what is wrong and what to do. */
    public static final class ListenException extends Exception {
        public ListenException(String message) {
            super(message);
        }
    }
}
