package dev.infertop.it;

import static org.junit.jupiter.api.Assertions.assertFalse;

/** Process checks the integration tests share: is it alive, is it gone, stop it. */
final class Processes {
    private Processes() {}

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** infertop has exited by now: whatever it launched must be gone too (it stops and reaps it). */
    static void assertGone(long pid) throws InterruptedException {
        for (int attempt = 0; attempt < 50 && alive(pid); attempt++) {
            Thread.sleep(100);
        }
        assertFalse(alive(pid), "the launched llama-bench (pid " + pid + ") still runs after infertop exited");
    }

    static void killIfAlive(long pid) {
        if (pid > 0) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
