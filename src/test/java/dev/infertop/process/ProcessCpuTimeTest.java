package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcessCpuTimeTest {
    @Test
    void fieldsCountFromTheCommandsLastParenthesis(@TempDir Path dir) throws IOException {
        // A target may name itself ") S 1 2 3 (": utime 250 ticks, stime 50 ticks -> 3 s.
        Path stat = dir.resolve("stat");
        Files.writeString(stat, "4242 (x) S 1 2 3 () R 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 1 2 3\n");
        assertEquals(3_000_000_000L, ProcessCpuTime.of(stat));
        Files.writeString(stat, "4242 (x) R 1\n");
        assertThrows(IOException.class, () -> ProcessCpuTime.of(stat));
    }

    @Test
    void thisProcessUsesCpu() throws IOException {
        long before = ProcessCpuTime.selfNs();
        long sum = 0;
        for (long deadline = System.nanoTime() + 200_000_000L; System.nanoTime() < deadline; ) {
            sum += System.identityHashCode(new Object());
        }
        assertTrue(ProcessCpuTime.selfNs() > before, "CPU time moved (" + sum + ")");
        assertEquals(ProcessCpuTime.selfNs() / 10_000_000, ProcessCpuTime.ns((int) ProcessHandle.current().pid())
                / 10_000_000, 5);
    }

    @Test
    void anotherProcessIsReadToTheNanosecondAndAgreesWithItsStatFile() throws Exception {
        Process spinner = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
        try {
            int pid = (int) spinner.pid();
            Thread.sleep(300);
            long clock = ProcessCpuTime.ns(pid);
            long ticks = ProcessCpuTime.of(Path.of("/proc/" + pid + "/stat"));
            assertTrue(clock > 100_000_000L, "the spinner ran: " + clock);
            assertEquals(ticks, clock, 30_000_000, "the clock and the stat file's ticks");
            boolean finerThanATick = false;
            for (int i = 0; i < 5 && !finerThanATick; i++) {
                finerThanATick = ProcessCpuTime.ns(pid) % 10_000_000 != 0; // 1 in 10^7 chance each of a whole tick
            }
            assertTrue(finerThanATick, "the CPU clock, not the stat file's 10 ms ticks");
        } finally {
            spinner.destroyForcibly().waitFor();
        }
    }

    @Test
    void aProcessThatIsGoneIsAnIoError() throws Exception {
        Process done = new ProcessBuilder("true").start();
        done.waitFor();
        assertThrows(IOException.class, () -> ProcessCpuTime.ns((int) done.pid()));
    }
}
