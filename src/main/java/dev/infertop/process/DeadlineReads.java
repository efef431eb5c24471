package dev.infertop.process;

import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Reads of the target's memory (process_vm_readv, /proc/PID/environ) on a reader thread of their own, each
 * waited for until a deadline. The target decides what backs its pages: a file on a FUSE file system it serves
 * itself (or a userfaultfd region it never fills) makes such a read wait in the kernel for as long as the target
 * likes, where no Java interrupt reaches it. The first read past its deadline is abandoned (its thread stays
 * blocked in the kernel, a daemon), the operator hears why in one line, and every later read answers "not read"
 * at once: infertop goes on without what those reads gave (tensor names, the roofline's source tensors).
 */
public final class DeadlineReads {
    /** Far above a read of resident memory (microseconds) or of a page read in from a disk. */
    public static final long DEFAULT_DEADLINE_MS = 5_000;

    /** The reads of the traced process's memory: one per infertop process, which traces one target. */
    public static final DeadlineReads TARGET = new DeadlineReads("infertop-target-read", DEFAULT_DEADLINE_MS);

    private final String threadName;
    private final long deadlineMs;
    private ExecutorService reader;
    private volatile String stalled;
    private volatile Consumer<String> notices = line -> System.err.println(line);

    public DeadlineReads(String threadName, long deadlineMs) {
        this.threadName = threadName;
        this.deadlineMs = deadlineMs;
    }

    /** Where the one line about a stalled read goes (the session's notices); stderr until set. */
    public void notices(Consumer<String> to) {
        notices = Objects.requireNonNull(to);
    }

    /** The line said when a read stalled, or null while none has. */
    public String stalled() {
        return stalled;
    }

    /**
     * {@code read}'s result, or {@code otherwise} when it fails, takes longer than the deadline (then this and
     * every later read are given up), or an earlier read stalled.
     */
    public <T> T read(String what, Callable<T> read, T otherwise) {
        if (stalled != null) {
            return otherwise;
        }
        Future<T> result;
        synchronized (this) {
            if (stalled != null) {
                return otherwise; // given up meanwhile: its reader is shut down
            }
            if (reader == null) {
                reader = Executors.newSingleThreadExecutor(task -> Thread.ofPlatform().daemon().name(threadName)
                        .unstarted(task));
            }
            result = reader.submit(read);
        }
        try {
            return result.get(deadlineMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            giveUp(what);
            return otherwise;
        } catch (ExecutionException e) {
            return otherwise;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return otherwise;
        }
    }

    private synchronized void giveUp(String what) {
        if (stalled != null) {
            return;
        }
        stalled = "infertop: " + what + " did not return within " + deadlineMs / 1000.0 + " s (the target's memory"
                + " there is backed by something that does not answer, such as a FUSE file it serves): its memory is"
                + " no longer read (tensor names and the roofline's tensors go unknown)";
        reader.shutdownNow(); // its thread stays blocked in the kernel: a daemon, abandoned
        notices.accept(stalled);
    }
}
