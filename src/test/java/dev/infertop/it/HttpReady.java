package dev.infertop.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Waiting for a server the test started (llama-server, Prometheus) to answer on loopback. */
final class HttpReady {
    private HttpReady() {}

    /**
     * Polls {@code url} every 200 ms until it answers 200; false after {@code timeoutSeconds}. Fails at once
     * when {@code server} exits meanwhile, with {@code whyExited} (e.g. its log) in the message.
     */
    static boolean await(String url, Process server, long timeoutSeconds, java.util.function.Supplier<String> whyExited)
            throws InterruptedException {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            assertTrue(server.isAlive(), () -> "the server exited while starting: " + whyExited.get());
            try {
                HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return true;
                }
            } catch (IOException notYet) {
                // not listening yet, or still loading
            }
            Thread.sleep(200);
        }
        return false;
    }
}
