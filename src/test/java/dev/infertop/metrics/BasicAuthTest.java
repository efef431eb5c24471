package dev.infertop.metrics;

import at.favre.lib.crypto.bcrypt.BCrypt;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BasicAuthTest {
    /** $2y$, as Apache's htpasswd -B writes it; $2a$ (Go's bcrypt) and $2b$ (OpenBSD) below. */
    private static final String HTPASSWD_2Y = BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, "secret".toCharArray());
    private static final String ANY_HASH = HTPASSWD_2Y;

    private static String header(String userAndPassword) {
        return "Basic " + Base64.getEncoder().encodeToString(userAndPassword.getBytes(StandardCharsets.UTF_8));
    }

    private static InetAddress address(String literal) throws Exception {
        return InetAddress.getByName(literal);
    }

    private int addresses;

    /** Each check from an address of its own: what the password gets, not the back-off. */
    private BasicAuth.Verdict fresh(BasicAuth auth, String authorization) throws Exception {
        addresses++;
        return auth.check(authorization, address("10.0." + addresses / 256 + "." + addresses % 256)).verdict();
    }

    @Test
    void acceptsEachBcryptVersionAndOnlyTheRightPassword() throws Exception {
        BasicAuth auth = new BasicAuth(Map.of(
                "alice", HTPASSWD_2Y,
                "bob", BCrypt.with(BCrypt.Version.VERSION_2A).hashToString(4, "hunter2".toCharArray()),
                "carol", BCrypt.with(BCrypt.Version.VERSION_2B).hashToString(4, "pä:ss".toCharArray())));
        assertTrue(HTPASSWD_2Y.startsWith("$2y$04$") && BasicAuth.isBcryptHash(HTPASSWD_2Y));
        BasicAuth.Verdict passed = BasicAuth.Verdict.PASSED;
        BasicAuth.Verdict refused = BasicAuth.Verdict.REFUSED;
        assertEquals(passed, fresh(auth, header("alice:secret")));
        assertEquals(passed, fresh(auth, header("alice:secret")), "remembered");
        assertEquals(1, auth.checksStarted(), "the second from memory");
        assertEquals(passed, fresh(auth, header("bob:hunter2")));
        assertEquals(passed, fresh(auth, header("carol:pä:ss")), "a colon in the password");
        assertEquals(passed, fresh(auth, "basic " + Base64.getEncoder().encodeToString("bob:hunter2".getBytes())),
                "scheme in any case");
        assertEquals(4, auth.checksStarted(), "another spelling of a header is checked once more");
        assertEquals(refused, fresh(auth, header("alice:Secret")));
        assertEquals(refused, fresh(auth, header("alice:secret ")));
        assertEquals(refused, fresh(auth, header("bob:secret")), "another user's password");
        assertEquals(refused, fresh(auth, header("mallory:secret")), "unknown user");
        assertEquals(8, auth.checksStarted(), "an unknown user is checked like a known one");
        assertEquals(refused, fresh(auth, header("alice")));
        assertEquals(refused, fresh(auth, header("alice:" + "x".repeat(100))), "past bcrypt's 72 bytes");
        assertEquals(refused, fresh(auth, null));
        assertEquals(refused, fresh(auth, "Bearer abc"));
        assertEquals(refused, fresh(auth, "Basic %%%not base64"));
        assertEquals(refused, fresh(auth, "Basic"));
        assertEquals(8, auth.checksStarted(), "nothing to check: no bcrypt");
        assertEquals(refused, fresh(auth, header("alice:Secret")));
        assertEquals(8, auth.checksStarted(), "a header that failed, again: refused with no check");
        assertEquals(4, auth.remembered());
    }

    @Test
    void hashFormIsChecked() {
        assertTrue(BasicAuth.isBcryptHash(BCrypt.withDefaults().hashToString(10, "x".toCharArray())));
        assertFalse(BasicAuth.isBcryptHash("secret"));
        assertFalse(BasicAuth.isBcryptHash("$2y$03$" + "a".repeat(53)), "cost below 4");
        assertFalse(BasicAuth.isBcryptHash("$2y$10$" + "a".repeat(52)));
        assertFalse(BasicAuth.isBcryptHash("$1$10$" + "a".repeat(53)));
    }

    /** A check that passes "right" and that each call holds until {@link #release}. */
    private static final class HeldCheck implements BasicAuth.Check {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch started = new CountDownLatch(1);

        @Override
        public boolean verify(byte[] password, byte[] hash) {
            started.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new String(password, StandardCharsets.UTF_8).equals("right");
        }
    }

    private static void awaitWaiting(BasicAuth auth, int checks) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (auth.checksWaiting() != checks && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(checks, auth.checksWaiting());
    }

    /**
     * One check runs and one waits behind it; a third, and every other, is not made (503 at once, retry after
     * 1 s), and counts for no back-off.
     */
    @Test
    void oneCheckRunsOneWaitsTheRestAreBusyAtOnce() throws Exception {
        HeldCheck held = new HeldCheck();
        BasicAuth auth = new BasicAuth(Map.of("alice", ANY_HASH), System::nanoTime, held, Duration.ofSeconds(30));
        ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor(); // two connections' threads
        CompletableFuture<BasicAuth.Outcome> running = CompletableFuture.supplyAsync(
                () -> auth.check(header("alice:right"), addressQuietly("10.0.0.1")), callers);
        assertTrue(held.started.await(10, TimeUnit.SECONDS));
        CompletableFuture<BasicAuth.Outcome> waiting = CompletableFuture.supplyAsync(
                () -> auth.check(header("alice:wrong"), addressQuietly("10.0.0.2")), callers);
        awaitWaiting(auth, 1);

        List<BasicAuth.Outcome> others = new ArrayList<>();
        for (int i = 3; i < 19; i++) {
            others.add(auth.check(header("alice:guess" + i), address("10.0.0." + i)));
        }
        assertEquals(List.of(new BasicAuth.Outcome(BasicAuth.Verdict.BUSY, 1)), others.stream().distinct().toList());
        assertEquals(new BasicAuth.Outcome(BasicAuth.Verdict.BUSY, 1),
                auth.check(header("alice:other"), address("10.0.0.1")), "the running one's address, in its free failure");
        assertEquals(1, auth.checksStarted());
        assertEquals(1, auth.checksWaiting());

        held.release.countDown();
        assertEquals(BasicAuth.Outcome.PASSED, running.get(10, TimeUnit.SECONDS));
        assertEquals(BasicAuth.Outcome.REFUSED, waiting.get(10, TimeUnit.SECONDS));
        assertEquals(2, auth.checksStarted());
        assertEquals(BasicAuth.Outcome.PASSED, auth.check(header("alice:right"), address("10.0.0.1")), "remembered");
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:guess3"), address("10.0.0.3")),
                "a busy answer is no failure: checked at once now");
        assertEquals(3, auth.checksStarted());
        callers.close();
    }

    /**
     * A connection waits at most the wait it was given (0.2 s here) and is then told 503; the check goes on, and
     * a password it passes is remembered: the next request gets in with no check.
     */
    @Test
    void aCheckNotDoneInTimeIsBusyAndStillCounts() throws Exception {
        HeldCheck held = new HeldCheck();
        BasicAuth auth = new BasicAuth(Map.of("alice", ANY_HASH), System::nanoTime, held, Duration.ofMillis(200));
        assertEquals(BasicAuth.Outcome.BUSY, auth.check(header("alice:right"), address("10.0.0.1")));
        held.release.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (auth.remembered() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(BasicAuth.Outcome.PASSED, auth.check(header("alice:right"), address("10.0.0.1")));
        assertEquals(1, auth.checksStarted());
    }

    /**
     * The back-off on a clock the test moves: the first failed check from an address costs no wait; after each
     * one more, its next new header waits 1, 2, 4, 8, 16, 30, 30 s (a 429 with that Retry-After, and no check);
     * other addresses are checked meanwhile; a password remembered passes from an address that is waiting, one
     * not remembered does not, and a header that failed before is refused at once.
     */
    @Test
    void failedChecksBackOffPerAddress() throws Exception {
        AtomicLong clockNs = new AtomicLong(1_000_000_000_000L);
        BasicAuth auth = new BasicAuth(Map.of("alice", ANY_HASH), clockNs::get,
                (password, hash) -> new String(password, StandardCharsets.UTF_8).equals("right"), Duration.ofSeconds(30));
        InetAddress guesser = address("192.0.2.7");
        List<Long> retryAfterSeconds = new ArrayList<>();
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:first"), guesser));
        for (int i = 0; i < 7; i++) {
            assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:guess" + i), guesser));
            BasicAuth.Outcome waiting = auth.check(header("alice:again" + i), guesser);
            assertEquals(BasicAuth.Verdict.BACKING_OFF, waiting.verdict());
            retryAfterSeconds.add(waiting.retryAfterSeconds());
            clockNs.addAndGet(TimeUnit.SECONDS.toNanos(waiting.retryAfterSeconds()) - 1);
            assertEquals(new BasicAuth.Outcome(BasicAuth.Verdict.BACKING_OFF, 1), auth.check(header("alice:x"), guesser),
                    "1 ns before the wait is over");
            clockNs.incrementAndGet();
        }
        assertEquals(List.of(1L, 2L, 4L, 8L, 16L, 30L, 30L), retryAfterSeconds);
        assertEquals(8, auth.checksStarted(), "no check while waiting");

        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:last"), guesser));
        assertEquals(new BasicAuth.Outcome(BasicAuth.Verdict.BACKING_OFF, 30), auth.check(header("alice:new"), guesser));
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:guess3"), guesser),
                "failed before: refused at once, waiting or not");
        assertEquals(BasicAuth.Verdict.BACKING_OFF, auth.check(header("alice:right"), guesser).verdict(),
                "not remembered: waits like any other");
        assertEquals(BasicAuth.Outcome.PASSED, auth.check(header("alice:right"), address("192.0.2.8")),
                "another address is checked");
        assertEquals(BasicAuth.Outcome.PASSED, auth.check(header("alice:right"), guesser),
                "remembered: passes from the waiting address, with no check");
        assertEquals(10, auth.checksStarted());

        InetAddress asker = address("192.0.2.9");
        for (int i = 0; i < 3; i++) {
            assertEquals(BasicAuth.Outcome.REFUSED, auth.check(null, asker), "no header: the challenge, free");
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(BasicAuth.Outcome.REFUSED, auth.check("Basic %%%", asker), "a malformed header counts once");
        }
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:guess"), asker));
        assertEquals(BasicAuth.Verdict.BACKING_OFF, auth.check(header("alice:guess-again"), asker).verdict());
        assertEquals(11, auth.checksStarted());

        InetAddress user = address("192.0.2.10");
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:typo"), user));
        String otherSpelling = "basic " + Base64.getEncoder().encodeToString("alice:right".getBytes());
        assertEquals(BasicAuth.Outcome.PASSED, auth.check(otherSpelling, user), "the first failure: checked at once");
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:typo2"), user),
                "a pass clears the address: checked at once, where a second failure in a row would wait 1 s");
        assertEquals(14, auth.checksStarted());
    }

    /**
     * Past its free failure, a check from an address counts as it starts: a second new header from there while
     * it runs is not queued beside it but waits its turn (429), and the queue stays empty.
     */
    @Test
    void aCheckCountsAsItStarts() throws Exception {
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        BasicAuth auth = new BasicAuth(Map.of("alice", ANY_HASH), System::nanoTime, (password, hash) -> {
            if (new String(password, StandardCharsets.UTF_8).equals("slow")) {
                slowStarted.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        }, Duration.ofSeconds(30));
        InetAddress client = address("10.0.0.1");
        assertEquals(BasicAuth.Outcome.REFUSED, auth.check(header("alice:one"), client));
        try (ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
            var slow = callers.submit(() -> auth.check(header("alice:slow"), client));
            assertTrue(slowStarted.await(10, TimeUnit.SECONDS));
            assertEquals(new BasicAuth.Outcome(BasicAuth.Verdict.BACKING_OFF, 1), auth.check(header("alice:three"), client));
            assertEquals(0, auth.checksWaiting());
            release.countDown();
            assertEquals(BasicAuth.Outcome.REFUSED, slow.get(10, TimeUnit.SECONDS));
        }
        assertEquals(2, auth.checksStarted());
    }

    private static InetAddress addressQuietly(String literal) {
        try {
            return address(literal);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
