package dev.infertop.metrics;

import at.favre.lib.crypto.bcrypt.BCrypt;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * {@code basic_auth_users} of a web config: user name to bcrypt hash ({@code $2a$}, {@code $2b$}, {@code $2y$},
 * as htpasswd -B and Go's bcrypt write them).
 *
 * <p>bcrypt is slow on purpose (tens of milliseconds at cost 10), so a scrape client must not be able to make
 * infertop spend it freely, nor hold a connection while it waits for it:
 * <ul>
 *   <li>A header that passed is remembered ({@link HeaderDigests}, {@link #PASSED_KEPT} of them): a scraper's
 *       later requests cost a salted SHA-256 compared in constant time, never a bcrypt check nor a wait, whatever
 *       others send. A header that failed is remembered too ({@link #FAILED_KEPT}): sent again (a scraper with a
 *       stale password) it is refused at once, with no check, and counts for no back-off.</li>
 *   <li>Checks run on one platform thread of their own ({@code infertop-bcrypt}: a virtual thread would hold
 *       its carrier for the whole check), one at a time, with at most {@link #WAITING} more queued behind it;
 *       a check that finds the queue full is not made ({@link Verdict#BUSY} at once), and a connection waits at
 *       most {@code wait} for its own ({@link Verdict#BUSY} then; the check still runs and its outcome counts).
 *       So a client guessing passwords gets one core at most, and holds no more than two connections in it.</li>
 *   <li>Per address, a back-off ({@link FailedChecks}): a check counts as failed as it starts (so past the
 *       free failures a second one from that address waits its turn rather than running beside it) and is
 *       cleared if it passes; until the address's wait is over its new headers get {@link Verdict#BACKING_OFF}
 *       with no check. A remembered header still passes from such an address: a guesser sharing a scraper's
 *       address (the same host) does not shut the scraper out once its password has passed.</li>
 * </ul>
 * An unknown user is checked against a hash of the same cost, so the time taken does not say which users exist.
 */
final class BasicAuth {
    /** bcrypt reads at most 72 bytes of a password; a longer one is refused rather than cut. */
    private static final int MAX_PASSWORD_BYTES = 72;
    static final String CHALLENGE = "Basic realm=\"infertop\", charset=\"UTF-8\"";
    /** Checks queued behind the one running. */
    static final int WAITING = 1;
    /** The longest a connection waits for its check (the one ahead of it and its own, at a usual cost). */
    static final Duration WAIT = Duration.ofSeconds(1);
    static final int PASSED_KEPT = 16;
    static final int FAILED_KEPT = 64;

    /** What a request's credentials get. */
    enum Verdict {
        /** Answer it. */
        PASSED,
        /** 401: no credentials, malformed ones, a wrong user or password, or a header that failed before. */
        REFUSED,
        /** 429: the address failed a check lately and must wait {@link Outcome#retryAfterSeconds}. */
        BACKING_OFF,
        /** 503: other checks fill the queue, or this one was not done in time. */
        BUSY
    }

    /** @param retryAfterSeconds when to try again (BACKING_OFF, BUSY), else 0 */
    record Outcome(Verdict verdict, long retryAfterSeconds) {
        static final Outcome PASSED = new Outcome(Verdict.PASSED, 0);
        static final Outcome REFUSED = new Outcome(Verdict.REFUSED, 0);
        static final Outcome BUSY = new Outcome(Verdict.BUSY, 1);
    }

    /** The bcrypt check itself; tests give a slower or a blocking one. */
    interface Check {
        boolean verify(byte[] password, byte[] hash);

        Check BCRYPT = (password, hash) -> BCrypt.verifyer().verify(password, hash).verified;
    }

    private record Credentials(String user, byte[] password) {}

    private final Map<String, byte[]> hashes;
    private final byte[] unknownUserHash;
    private final LongSupplier clockNs;
    private final Check check;
    private final long waitNs;
    private final byte[] salt = HeaderDigests.newSalt();
    private final HeaderDigests passed = new HeaderDigests(PASSED_KEPT);
    private final HeaderDigests failed = new HeaderDigests(FAILED_KEPT);
    /** Guarded by itself; also orders a check's start with its outcome. */
    private final FailedChecks failures = new FailedChecks();
    private final ThreadPoolExecutor checker;
    private final AtomicLong checksStarted = new AtomicLong();

    /** @param hashes user to bcrypt hash, at least one, each already checked for form ({@link #isBcryptHash}) */
    BasicAuth(Map<String, String> hashes) {
        this(hashes, System::nanoTime, Check.BCRYPT, WAIT);
    }

    BasicAuth(Map<String, String> hashes, LongSupplier clockNs, Check check, Duration wait) {
        Map<String, byte[]> bytes = new HashMap<>();
        hashes.forEach((user, hash) -> bytes.put(user, hash.getBytes(StandardCharsets.US_ASCII)));
        this.hashes = Map.copyOf(bytes);
        // An unknown user costs what a known one does: a check against a real hash, whose answer is dropped.
        unknownUserHash = this.hashes.values().iterator().next();
        this.clockNs = clockNs;
        this.check = check;
        this.waitNs = wait.toNanos();
        // One thread, started at the first check and kept (an idle platform thread costs its stack, nothing more).
        checker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.NANOSECONDS, new ArrayBlockingQueue<>(WAITING),
                runnable -> Thread.ofPlatform().name("infertop-bcrypt").daemon().unstarted(runnable),
                new ThreadPoolExecutor.AbortPolicy());
    }

    /** A bcrypt hash as the modular crypt format writes it: {@code $2y$10$} and 53 characters of salt and hash. */
    static boolean isBcryptHash(String hash) {
        if (!hash.matches("\\$2[aby]\\$[0-9]{2}\\$[./A-Za-z0-9]{53}")) {
            return false;
        }
        int cost = Integer.parseInt(hash.substring(4, 6));
        return cost >= BCrypt.MIN_COST && cost <= BCrypt.MAX_COST;
    }

    /**
     * What a request from {@code client} with {@code authorization} (the header's value, or null) gets. Waits at
     * most the {@code wait} it was made with; any thread.
     */
    Outcome check(String authorization, InetAddress client) {
        if (authorization == null) {
            return Outcome.REFUSED; // asking for the challenge: costs nothing, counts for nothing
        }
        byte[] digest = HeaderDigests.digest(salt, authorization);
        if (passed.contains(digest)) {
            return Outcome.PASSED;
        }
        if (failed.contains(digest)) {
            return Outcome.REFUSED; // the same answer as its check gave, for no new one
        }
        Credentials credentials = parse(authorization);
        FutureTask<Boolean> task;
        synchronized (failures) {
            long nowNs = clockNs.getAsLong();
            long waitForNs = failures.waitNanos(client, nowNs);
            if (waitForNs > 0) {
                return new Outcome(Verdict.BACKING_OFF, Math.ceilDiv(waitForNs, 1_000_000_000L));
            }
            if (credentials == null) {
                failed.add(digest); // the same again is refused by the lookup above, and counts once
                failures.failed(client, nowNs);
                return Outcome.REFUSED;
            }
            task = new FutureTask<>(() -> verify(credentials, digest, client));
            try {
                checker.execute(task);
            } catch (RejectedExecutionException full) {
                return Outcome.BUSY;
            }
            failures.failed(client, nowNs); // cleared by verify if it passes, which needs this lock: after this
        }
        try {
            return task.get(waitNs, TimeUnit.NANOSECONDS) ? Outcome.PASSED : Outcome.REFUSED;
        } catch (TimeoutException e) {
            return Outcome.BUSY; // it still runs, and a pass is remembered: the next scrape gets in
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.BUSY;
        } catch (ExecutionException e) {
            return Outcome.REFUSED; // the hashes were checked for form at start: not expected
        }
    }

    /** On the checker thread. */
    private boolean verify(Credentials credentials, byte[] digest, InetAddress client) {
        checksStarted.incrementAndGet();
        byte[] hash = hashes.get(credentials.user());
        boolean verified = check.verify(credentials.password(), hash != null ? hash : unknownUserHash) && hash != null;
        if (verified) {
            passed.add(digest);
            synchronized (failures) {
                failures.passed(client);
            }
        } else {
            failed.add(digest);
        }
        return verified;
    }

    /** {@code Basic base64(user:password)}, or null when it is not that or the password is over 72 bytes. */
    private static Credentials parse(String authorization) {
        if (authorization.length() < 6 || !authorization.substring(0, 6).toLowerCase(Locale.ROOT).equals("basic ")) {
            return null;
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return null;
        }
        byte[] password = decoded.substring(colon + 1).getBytes(StandardCharsets.UTF_8);
        return password.length > MAX_PASSWORD_BYTES ? null : new Credentials(decoded.substring(0, colon), password);
    }

    /** bcrypt checks started so far (tests). */
    long checksStarted() {
        return checksStarted.get();
    }

    /** bcrypt checks queued behind the running one (tests). */
    int checksWaiting() {
        return checker.getQueue().size();
    }

    /** Headers remembered as passed (tests). */
    int remembered() {
        return passed.size();
    }
}
