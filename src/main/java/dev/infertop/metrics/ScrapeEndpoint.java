package dev.infertop.metrics;

import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The {@code --listen} socket: a small HTTP/1.1 server for scrapes, where every client is untrusted and none
 * can slow another's scrape or grow infertop. The JDK's {@code com.sun.net.httpserver} could not promise that:
 * it reads request heads on its executor's threads with no deadline of its own (one client sending {@code G}
 * held a one-thread executor for good), its {@code sun.net.httpserver.maxReqTime} is JVM-wide, in whole
 * seconds, and counts a request's time in the executor's queue too (a scrape queued behind a stalled client was
 * reset), and its dispatcher thread keeps the JVM alive.
 *
 * <ul>
 *   <li>Each connection has a virtual thread of its own (a daemon, like every thread here), so a stalled client
 *       holds only its own; at most {@link Limits#maxConnections} are open, and of those at most
 *       {@link Limits#maxUnchecked} whose request the {@link Gate} has not let through yet (reading its head, or
 *       having its credentials checked): the rest are kept for scrapes that passed. One more connection makes room
 *       by closing the oldest that is waiting for its client to send the rest of its head: its thread is in a read
 *       with nothing unread in the kernel, and it was accepted over {@link #HEAD_GRACE_NS} ago (a scraper sends its
 *       head at once, so a stalled client goes first; a connection whose head is there but whose thread has not
 *       read it yet is not the client's fault). When none is, the new connection is accepted once one ends, moves
 *       on or leaves its grace; until then it waits in the kernel's accept queue ({@link #BACKLOG}), which costs
 *       infertop nothing.</li>
 *   <li>The gate (basic auth) is asked before a connection counts as being answered, and may wait (boundedly):
 *       a client waiting for a password check holds an unchecked slot, never one kept for scrapes.</li>
 *   <li>Deadlines, not per-read timeouts: the TLS handshake and the request head (at most
 *       {@link RequestHead#MAX_BYTES}) must arrive within {@link Limits#headDeadline} of the accept, the gate and
 *       the answer must be done within {@link Limits#replyDeadline}; past either, one daemon timer thread closes the
 *       socket, which ends whatever read or write its thread was blocked in. A client dripping a byte a second
 *       gets no more time than one sending nothing.</li>
 *   <li>A request's body is never read, and every answer ends with {@code Connection: close}: a
 *       {@code Content-Length} with no body behind it costs nothing.</li>
 * </ul>
 */
final class ScrapeEndpoint implements AutoCloseable {
    private static final int BACKLOG = 64;
    /**
     * How long a connection may wait for its client's first bytes before it can be closed to make room: a client
     * sends its head right behind the handshake's last packet, but our thread may start reading before it lands.
     */
    static final long HEAD_GRACE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * How many clients may be connected, how many of them before the gate let their request through, and for how
     * long each may take to ask and to be answered (the gate's wait included).
     */
    record Limits(int maxConnections, int maxUnchecked, Duration headDeadline, Duration replyDeadline) {
        static final Limits DEFAULT = new Limits(16, Duration.ofSeconds(2), Duration.ofSeconds(5));

        Limits {
            if (maxUnchecked < 1 || maxUnchecked > maxConnections) {
                throw new IllegalArgumentException("unchecked connections " + maxUnchecked + " of " + maxConnections);
            }
        }

        /** A quarter of the connections (at least one) kept for requests that passed the gate. */
        Limits(int maxConnections, Duration headDeadline, Duration replyDeadline) {
            this(maxConnections, maxConnections - Math.max(1, maxConnections / 4), headDeadline, replyDeadline);
        }
    }

    /** An answer; {@code headers} are extra header lines ("Name: value"). */
    record Response(int status, String contentType, byte[] body, List<String> headers) {
        Response(int status, String body) {
            this(status, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8), List.of());
        }
    }

    /** Answers one request, on the connection's own thread (so on many threads at once). */
    interface Handler {
        Response handle(RequestHead request);
    }

    /** Whether a request may be answered; on the connection's own thread, before it counts as being answered. */
    interface Gate {
        /** Lets every request through. */
        Gate OPEN = (request, client) -> null;

        /** Null to answer {@code request} from {@code client}, else what to answer instead (401, 429, 503). */
        Response refusal(RequestHead request, InetAddress client);
    }

    /** Where a connection is: only a reading one may be closed to make room; the last never counts as unchecked. */
    private enum Phase { READING, CHECKING, ANSWERING }

    private final ServerSocket listening;
    private final SSLSocketFactory tls;
    private final Gate gate;
    private final Handler handler;
    private final Limits limits;
    private final ScheduledThreadPoolExecutor deadlines;
    /** The open connections in the order they were accepted; guarded by itself. */
    private final LinkedHashSet<Connection> open = new LinkedHashSet<>();
    /** The accept loop waits on {@code open} for room; guarded by {@code open}. */
    private boolean acceptorWaiting;
    private volatile boolean closed;

    private ScrapeEndpoint(ServerSocket listening, SSLSocketFactory tls, Gate gate, Handler handler, Limits limits) {
        this.listening = listening;
        this.tls = tls;
        this.gate = gate;
        this.handler = handler;
        this.limits = limits;
        deadlines = new ScheduledThreadPoolExecutor(1, runnable ->
                Thread.ofPlatform().name("infertop-metrics-deadlines").daemon().unstarted(runnable));
        deadlines.setRemoveOnCancelPolicy(true); // a connection answered in time leaves no task behind
    }

    /**
     * Binds {@code address} and starts accepting.
     *
     * @param tls null for plain HTTP
     * @throws IOException binding failed (taken port, address not ours, no permission)
     */
    static ScrapeEndpoint start(InetSocketAddress address, SSLSocketFactory tls, Gate gate, Handler handler,
                                Limits limits) throws IOException {
        ServerSocket listening = new ServerSocket(address.getPort(), BACKLOG, address.getAddress());
        ScrapeEndpoint endpoint = new ScrapeEndpoint(listening, tls, gate, handler, limits);
        Thread.ofPlatform().name("infertop-metrics").daemon().start(endpoint::acceptLoop);
        return endpoint;
    }

    /** The port bound (the one asked for, or the one the kernel chose for 0). */
    int port() {
        return listening.getLocalPort();
    }

    /** Connections open now (tests). */
    int openConnections() {
        synchronized (open) {
            return open.size();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listening.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                pause(); // out of file descriptors, say: try again shortly rather than spin
                continue;
            }
            try {
                admit(socket);
            } catch (RuntimeException | InterruptedException e) {
                closeQuietly(socket); // closed meanwhile (the timer refuses new deadlines): nothing to serve
            }
        }
    }

    private void admit(Socket socket) throws InterruptedException {
        Connection connection;
        Connection evicted = null;
        synchronized (open) {
            while (true) {
                if (closed) {
                    closeQuietly(socket);
                    return;
                }
                int unchecked = 0;
                for (Connection other : open) {
                    unchecked += other.phase != Phase.ANSWERING ? 1 : 0;
                }
                if (open.size() < limits.maxConnections() && unchecked < limits.maxUnchecked()) {
                    break;
                }
                long nowNs = System.nanoTime();
                long soonestNs = Long.MAX_VALUE; // when a connection waiting for its client leaves its grace
                for (Connection candidate : open) {
                    if (candidate.phase == Phase.READING && candidate.inRead && unread(candidate.socket) == 0) {
                        long graceLeftNs = candidate.acceptedNs + HEAD_GRACE_NS - nowNs;
                        if (graceLeftNs <= 0) {
                            evicted = candidate;
                            break;
                        }
                        soonestNs = Math.min(soonestNs, graceLeftNs);
                    }
                }
                if (evicted != null) {
                    open.remove(evicted);
                    break;
                }
                // Each unchecked one is being checked, has its head unread, or is in its grace: wait for one of
                // them to end, move on or leave its grace.
                acceptorWaiting = true;
                try {
                    open.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(soonestNs) + 1, 100)));
                } finally {
                    acceptorWaiting = false;
                }
            }
            connection = new Connection(socket); // its grace from now, not from when the wait began
            open.add(connection);
        }
        if (evicted != null) {
            evicted.abort();
        }
        connection.deadline = deadlines.schedule(connection::abort, limits.headDeadline().toNanos(),
                TimeUnit.NANOSECONDS);
        Thread.ofVirtual().name("infertop-metrics-client").start(connection);
    }

    /** Bytes the kernel holds for {@code socket} (under TLS: records not read yet); 0 for a closed one. */
    private static int unread(Socket socket) {
        try {
            return socket.getInputStream().available(); // FIONREAD: never blocks, nor waits for a reader
        } catch (IOException e) {
            return 0;
        }
    }

    /** A connection moved on or ended: the accept loop may have room now. Holding {@code open}. */
    private void roomMayHaveChanged() {
        if (acceptorWaiting) {
            open.notifyAll();
        }
    }

    private final class Connection implements Runnable {
        private final Socket socket;
        private final long acceptedNs = System.nanoTime();
        private volatile ScheduledFuture<?> deadline;
        /** Guarded by {@code open}. */
        private Phase phase = Phase.READING;
        /** Its thread is in the TLS handshake or a read of the head: waiting for its client, if nothing is unread. */
        private volatile boolean inRead;

        Connection(Socket socket) {
            this.socket = socket;
        }

        @Override
        public void run() {
            try {
                serve();
            } catch (IOException | RuntimeException e) {
                // gone, past its deadline, evicted, not TLS: nothing to tell anyone, the next scrape starts afresh
            } finally {
                deadline.cancel(false);
                synchronized (open) {
                    open.remove(this);
                    roomMayHaveChanged();
                }
                closeQuietly(socket);
            }
        }

        private void serve() throws IOException {
            socket.setTcpNoDelay(true);
            Socket stream = socket;
            if (tls != null) {
                SSLSocket ssl = (SSLSocket) tls.createSocket(socket, null, true);
                readingFromClient();
                ssl.startHandshake();
                stream = ssl;
            }
            InputStream in = stream.getInputStream();
            byte[] head = new byte[RequestHead.MAX_BYTES];
            int length = 0;
            int end = -1;
            while (end < 0) {
                if (length == head.length) {
                    reply(stream, new Response(431, "request head over " + RequestHead.MAX_BYTES + " bytes\n"), false);
                    return;
                }
                readingFromClient();
                int read = in.read(head, length, head.length - length);
                if (read < 0) {
                    return;
                }
                int from = length;
                length += read;
                end = RequestHead.end(head, from, length);
            }
            inRead = false;
            RequestHead request;
            try {
                request = RequestHead.parse(head, end);
            } catch (IllegalArgumentException e) {
                reply(stream, new Response(400, "not an HTTP/1.1 request\n"), false);
                return;
            }
            synchronized (open) {
                if (!open.contains(this)) {
                    return; // evicted as the head came in
                }
                phase = Phase.CHECKING;
            }
            deadline.cancel(false);
            deadline = deadlines.schedule(this::abort, limits.replyDeadline().toNanos(), TimeUnit.NANOSECONDS);
            boolean headOnly = request.method().equals("HEAD");
            Response refusal = gate.refusal(request, socket.getInetAddress());
            if (refusal != null) {
                reply(stream, refusal, headOnly);
                return;
            }
            synchronized (open) {
                phase = Phase.ANSWERING;
                roomMayHaveChanged();
            }
            reply(stream, handler.handle(request), headOnly);
        }

        /** About to wait for bytes from the client: from now on evictable while nothing is unread. */
        private void readingFromClient() {
            inRead = true;
            synchronized (open) {
                roomMayHaveChanged();
            }
        }

        /** Closes the socket under whatever its thread is blocked in: the thread then ends. Any thread. */
        void abort() {
            closeQuietly(socket);
        }
    }

    private static void reply(Socket stream, Response response, boolean headOnly) throws IOException {
        StringBuilder head = new StringBuilder(256).append("HTTP/1.1 ").append(response.status()).append(' ')
                .append(reason(response.status())).append("\r\nContent-Type: ").append(response.contentType())
                .append("\r\nContent-Length: ").append(response.body().length).append("\r\n");
        for (String header : response.headers()) {
            head.append(header).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        int bodyLength = headOnly ? 0 : response.body().length;
        byte[] message = new byte[headBytes.length + bodyLength];
        System.arraycopy(headBytes, 0, message, 0, headBytes.length);
        System.arraycopy(response.body(), 0, message, headBytes.length, bodyLength);
        OutputStream out = stream.getOutputStream();
        out.write(message);
        out.flush();
        stream.close(); // TLS: close_notify, still under the reply deadline
    }

    static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
    }

    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a socket the client already dropped: nothing left to do
        }
    }

    /** Stops listening and closes every connection at once (a scrape in progress is cut off). Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            listening.close();
        } catch (IOException e) {
            // already closed
        }
        List<Connection> cut;
        synchronized (open) {
            cut = List.copyOf(open);
            open.clear();
            open.notifyAll(); // an accept loop waiting for room ends
        }
        cut.forEach(Connection::abort);
        deadlines.shutdownNow();
    }
}
