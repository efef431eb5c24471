package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The target decides how long its /proc/PID/maps is: infertop reads a bounded start of it and says so. */
class ProcessMapsBoundsTest {
    @TempDir
    Path dir;

    @Test
    void moreLinesThanTheCapKeepTheFirstAndSaySo() throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < ProcessMaps.MAX_LINES + 10; i++) {
            text.append(Long.toHexString(0x10000L + i * 0x1000L)).append('-')
                    .append(Long.toHexString(0x11000L + i * 0x1000L)).append(" r--p 00000000 00:00 0\n");
        }
        ProcessMaps maps = ProcessMaps.parse("many", text.toString());
        assertTrue(maps.truncated());
        assertEquals(ProcessMaps.MAX_LINES, maps.mappings().size());
        assertEquals("infertop: many is longer than 16 MiB or 262144 lines: only the first 262144 mappings were read"
                + " (libraries mapped after them are not probed)", maps.truncationNote());
        assertFalse(ProcessMaps.parse("few", "10000-11000 r--p 00000000 00:00 0\n").truncated());
    }

    @Test
    void aRealProcessWhoseMapsExceedTheByteCapIsReadInPart() throws Exception {
        // 16 levels of 250-character directories: a path of ~4 KiB, mapped 5000 times = ~20 MiB of maps.
        Path deep = dir;
        for (int i = 0; i < 16; i++) {
            deep = deep.resolve(String.valueOf((char) ('a' + i)).repeat(250));
        }
        Files.createDirectories(deep);
        Path file = Files.write(deep.resolve("f"), new byte[4096]);
        Process python = new ProcessBuilder("python3", "-c", """
                import mmap, sys, time
                f = open(sys.argv[1], 'rb')
                keep = [mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ) for _ in range(5000)]
                print('ready', flush=True)
                time.sleep(60)
                """, file.toString()).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(python.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("ready", out.readLine());
            long started = System.nanoTime();
            ProcessMaps maps = ProcessMaps.of(python.pid());
            assertTrue(maps.truncated(), "over 16 MiB of maps");
            long mapped = maps.mappings().stream().filter(m -> m.path().equals(file.toString())).count();
            assertTrue(mapped > 3000 && mapped < 5000, mapped + " of the 5000 mappings read");
            assertTrue(maps.truncationNote().startsWith("infertop: /proc/" + python.pid() + "/maps is longer than 16 MiB"));
            assertTrue(System.nanoTime() - started < 5_000_000_000L);
        } finally {
            python.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
