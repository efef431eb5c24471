package dev.infertop.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertFalse;

/** Process checks the integration tests share: is it alive, is it gone, stop it, what did a command print. */
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

    /** Runs a command to its end and returns what it printed, stdout and stderr together; its status is not checked. */
    static String output(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return output;
    }
}
