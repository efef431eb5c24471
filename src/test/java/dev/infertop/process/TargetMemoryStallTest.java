package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target whose memory never answers: a page registered with userfaultfd whose faults it never serves (as a
 * page of a FUSE file it serves itself would be). process_vm_readv of that page waits in the kernel for as long
 * as the target likes; infertop's read used to wait with it, forever, on the thread that asked (the pipeline's).
 * Now the read is given up at its deadline with one line, and later reads answer at once.
 */
class TargetMemoryStallTest {
    private static final String STALLING = """
            #define _GNU_SOURCE
            #include <fcntl.h>
            #include <linux/userfaultfd.h>
            #include <stdio.h>
            #include <sys/ioctl.h>
            #include <sys/mman.h>
            #include <sys/syscall.h>
            #include <unistd.h>
            int main(void) {
                long page = sysconf(_SC_PAGESIZE);
                int uffd = (int) syscall(SYS_userfaultfd, O_CLOEXEC);
                struct uffdio_api api = {.api = UFFD_API};
                if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
                    perror("userfaultfd");
                    return 1;
                }
                char *region = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                struct uffdio_register reg = {.range = {(unsigned long) region, page}, .mode = UFFDIO_REGISTER_MODE_MISSING};
                if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
                    perror("register");
                    return 1;
                }
                printf("%lx\\n", (unsigned long) region);
                fflush(stdout);
                for (;;) pause();
            }
            """;

    @TempDir
    Path dir;

    @Test
    void aReadOfMemoryThatNeverAnswersIsGivenUpWithOneLine() throws Exception {
        TestTools.requireOrSkip("0".equals(new String(new ProcessBuilder("id", "-u").start().getInputStream()
                .readAllBytes()).strip()), "needs root (userfaultfd that holds kernel reads, process_vm_readv)");
        Path source = Files.writeString(dir.resolve("stalling.c"), STALLING);
        Process gcc = new ProcessBuilder("gcc", "-O2", "-o", dir.resolve("stalling").toString(), source.toString())
                .redirectErrorStream(true).start();
        String gccOut = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        TestTools.requireOrSkip(gcc.waitFor(120, TimeUnit.SECONDS) && gcc.exitValue() == 0, "gcc: " + gccOut);
        Process target = new ProcessBuilder(dir.resolve("stalling").toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String line = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(line != null && line.matches("[0-9a-f]+"), "the target registered its page: " + line);
            long address = Long.parseUnsignedLong(line, 16);
            int pid = (int) target.pid();
            List<String> notices = new ArrayList<>();
            DeadlineReads reads = new DeadlineReads("infertop-target-read", 2_000);
            reads.notices(notices::add);
            // Generous for a loaded machine: the deadline is 2 s; the read it gives up on never returns.
            byte[] bytes = assertTimeoutPreemptively(Duration.ofSeconds(60),
                    () -> TargetMemory.bytes(reads, pid, address, 16), "the read came back");
            assertNull(bytes, "nothing read");
            assertEquals(1, notices.size(), "one line: " + notices);
            assertTrue(notices.getFirst().startsWith("infertop: reading process " + pid + "'s memory at 0x"
                    + Long.toHexString(address) + " did not return within 2.0 s"), notices.getFirst());
            long again = System.nanoTime();
            assertNull(TargetMemory.bytes(reads, pid, address - 4096, 16), "later reads: not read");
            assertTrue(System.nanoTime() - again < TimeUnit.SECONDS.toNanos(1), "answered at once");
            assertEquals(1, notices.size(), "said once: " + notices);
        } finally {
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
