package dev.infertop.bpf;

import java.util.ArrayList;
import java.util.List;

/**
 * Detaches many probes at once. Closing a uprobe's perf event makes the kernel unregister it and wait for a
 * grace period before it returns, so the default layers' links closed one after another take a long time.
 * The kernel serialises most of it (trace events' event_mutex), so threads only overlap the rest
 * (measurements.md, "Quit"). An uprobe-multi link waits once for all its probes, and takes no such mutex:
 * closed in parallel, the links' waits overlap.
 */
final class LinkCloser {
    /** Threads for one detach: the waits are in the kernel, not on a CPU, so more threads than cores. */
    static final int MAX_THREADS = 16;
    /** Below this many links one thread is as fast as starting others. */
    private static final int MIN_LINKS_PER_THREAD = 1;

    private LinkCloser() {}

    /** Closes every link, in parallel where there are many; returns when all are closed. */
    static void closeAll(List<? extends ProbeLink> links) {
        int threads = Math.min(MAX_THREADS, links.size() / MIN_LINKS_PER_THREAD);
        if (threads <= 1) {
            links.forEach(ProbeLink::close);
            return;
        }
        List<Thread> started = new ArrayList<>(threads);
        for (int t = 0; t < threads; t++) {
            int first = t;
            started.add(Thread.ofPlatform().name("infertop-detach-" + t).daemon().start(() -> {
                for (int i = first; i < links.size(); i += threads) {
                    links.get(i).close();
                }
            }));
        }
        boolean interrupted = false;
        for (Thread thread : started) {
            while (true) {
                try {
                    thread.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the links must be closed before the caller goes on
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
