package dev.infertop.process;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A time limit around the reading of a target's files at attach time. The reading runs while the probe set
 * is locked, and the shutdown hook (Ctrl-C) needs that lock to detach: whatever a crafted file makes the
 * decoders do, the lock comes back within the limit. The scan runs on a daemon thread that is interrupted
 * when the limit passes (the decoders' long loops stop on interruption), and the file is reported skipped.
 */
public final class ScanTimeLimit {
    /** Far above what a real library takes (libggml-cpu: well under a second), far below an operator's patience. */
    public static final long DEFAULT_LIMIT_MS = 10_000;

    private ScanTimeLimit() {}

    /** The limit for one library: the default times the user's {@link AttachPatience}. */
    public static long limitMs() {
        return AttachPatience.scaledMs(DEFAULT_LIMIT_MS);
    }

    /**
     * Throws when the time limit gave up on this scan (it interrupts the thread): called inside every loop whose
     * length a file decides, so that the thread ends soon after the limit instead of running on, unseen.
     */
    public static void checkInterrupted(Object what) throws TargetException {
        if (Thread.currentThread().isInterrupted()) {
            throw new TargetException(what + ": reading it was interrupted (time limit)");
        }
    }

    /** One piece of reading that may fail with a {@link TargetException}. */
    @FunctionalInterface
    public interface Scan<T> {
        T run() throws TargetException;
    }

    /**
     * Runs {@code scan} for at most {@code limitMs}; its result, or a {@link TargetException} naming
     * {@code what} when it fails, throws anything else, or takes longer.
     */
    public static <T> T run(String what, long limitMs, Scan<T> scan) throws TargetException {
        FutureTask<T> task = new FutureTask<>(scan::run);
        Thread thread = Thread.ofPlatform().daemon().name("infertop-scan").start(task);
        try {
            return task.get(limitMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            thread.interrupt();
            throw new TargetException(what + ": still reading it after " + limitMs / 1000.0 + " s: given up"
                    + AttachPatience.HINT);
        } catch (InterruptedException e) {
            thread.interrupt();
            Thread.currentThread().interrupt();
            throw new TargetException(what + ": interrupted");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TargetException target) {
                throw target;
            }
            // A decoder bug must cost this one file, not the session: say what broke, one line.
            throw new TargetException(what + ": cannot read it (" + cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")", cause);
        }
    }
}
