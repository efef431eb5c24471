package dev.infertop.process;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AttachedProcessTest {
    @Test
    void aliveUntilItExitsAndNotAfterEvenUnreaped() throws Exception {
        Process child = new ProcessBuilder("sleep", "30").start();
        try (AttachedProcess attached = AttachedProcess.of((int) child.pid())) {
            assertTrue(attached.isAlive());
            assertTrue(attached.isAlive(), "asking does not use anything up");
            // SIGKILL, then wait until the kernel has it as a zombie (the JDK's reaper may take it at any time).
            child.destroyForcibly();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (attached.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertFalse(attached.isAlive(), "an exited process is not alive, reaped or not");
        } finally {
            child.destroyForcibly().waitFor();
        }
    }

    @Test
    void noSuchProcessIsRefused() {
        assertThrows(TargetException.class, () -> AttachedProcess.of(0));
        assertThrows(TargetException.class, () -> AttachedProcess.of(Integer.MAX_VALUE));
    }
}
