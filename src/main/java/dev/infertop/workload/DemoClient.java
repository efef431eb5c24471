package dev.infertop.workload;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo's users: a few concurrent clients sending llama-server a steady stream of {@code /completion}
 * requests of varied prompt and answer lengths, on loopback only, until closed. What a demo audience should
 * see: slots filling and emptying, continuous batching, per-request TTFT and TPOT. A request that fails (the
 * server still loading, or gone) is retried after a pause; nothing here ever stops the demo.
 */
public final class DemoClient implements AutoCloseable {
    /** Clients at once: fewer than the server's slots, so a slot is sometimes free and prompts interleave. */
    public static final int CONCURRENT = 3;
    private static final String PROMPT = "Once upon a time ";

    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean closed;

    private final java.util.function.BooleanSupplier ready;

    private DemoClient(int port, java.util.function.BooleanSupplier ready) {
        this.port = port;
        this.ready = ready;
    }

    /** A free loopback port for the server (taken back at once; the server binds it a moment later). */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Starts {@link #CONCURRENT} clients of the server on {@code port}. */
    public static DemoClient start(int port) {
        return startWhen(port, () -> true);
    }

    /**
     * As {@link #start}, the clients sending their first request only once {@code ready} says so (polled): a server
     * traced by pid is left idle until its tracer's probes are in, so that no request is half seen.
     */
    public static DemoClient startWhen(int port, java.util.function.BooleanSupplier ready) {
        DemoClient client = new DemoClient(port, ready);
        for (int i = 0; i < CONCURRENT; i++) {
            int worker = i;
            client.workers.add(Thread.ofPlatform().name("infertop-demo-client-" + i).daemon()
                    .start(() -> client.loop(worker)));
        }
        return client;
    }

    private void loop(int worker) {
        SplitMix64 random = new SplitMix64(0x5eed + worker);
        while (!closed && !ready.getAsBoolean()) {
            pause(20);
        }
        while (!closed) {
            // A byte-level vocabulary: a token per byte. Prompts of 17 to 136 tokens (short prefills, so every
            // interval shows decoding too), answers of 16 to 96.
            int repeats = 1 + (int) Long.remainderUnsigned(random.nextLong(), 8);
            int predict = 16 + 8 * (int) Long.remainderUnsigned(random.nextLong(), 11);
            String body = "{\"prompt\":\"" + PROMPT.repeat(repeats) + "\",\"n_predict\":" + predict
                    + ",\"cache_prompt\":false,\"ignore_eos\":true}";
            try {
                HttpResponse<Void> response = http.send(HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + port + "/completion"))
                        .timeout(Duration.ofMinutes(2)).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() != 200) {
                    pause(500);
                }
            } catch (IOException e) {
                pause(300); // still loading (the server waits at infertop's gate), or gone
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        workers.forEach(Thread::interrupt);
    }
}
