package dev.infertop.ffi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiles against the host's linux/perf_event.h and checks the perf_event_attr fields Java writes. */
class PerfEventAttrTest {
    @Test
    void attrLayoutMatchesLinuxPerfEventH() throws Exception {
        Path dir = Files.createTempDirectory("infertop-perf");
        Path source = dir.resolve("attr.c");
        Files.writeString(source, """
                #include <stddef.h>
                #include <stdio.h>
                #include <string.h>
                #include <linux/perf_event.h>
                #define P(f) printf(#f " %zu\\n", offsetof(struct perf_event_attr, f))
                int main(void) {
                    struct perf_event_attr a;
                    unsigned long long flags;
                    P(type); P(size); P(config); P(sample_period); P(read_format); P(config1); P(config2); P(wakeup_events);
                    P(sample_regs_intr); P(aux_watermark); P(sample_max_stack);
                    printf("VER5 %d\\n", PERF_ATTR_SIZE_VER5);
                    printf("HARDWARE %d\\nSOFTWARE %d\\nHW_CACHE %d\\nRAW %d\\n", PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE,
                           PERF_TYPE_HW_CACHE, PERF_TYPE_RAW);
                    printf("ENABLED %d\\nRUNNING %d\\nCLOEXEC %lu\\n", PERF_FORMAT_TOTAL_TIME_ENABLED,
                           PERF_FORMAT_TOTAL_TIME_RUNNING, (unsigned long) PERF_FLAG_FD_CLOEXEC);
                    memset(&a, 0, sizeof(a)); a.disabled = 1;
                    memcpy(&flags, (char *) &a + offsetof(struct perf_event_attr, read_format) + 8, 8);
                    printf("disabled %llu\\n", flags);
                    memset(&a, 0, sizeof(a)); a.inherit = 1;
                    memcpy(&flags, (char *) &a + offsetof(struct perf_event_attr, read_format) + 8, 8);
                    printf("inherit %llu\\n", flags);
                    memset(&a, 0, sizeof(a)); a.exclude_hv = 1;
                    memcpy(&flags, (char *) &a + offsetof(struct perf_event_attr, read_format) + 8, 8);
                    printf("exclude_hv %llu\\n", flags);
                    memset(&a, 0, sizeof(a)); a.exclude_kernel = 1;
                    memcpy(&flags, (char *) &a + offsetof(struct perf_event_attr, read_format) + 8, 8);
                    printf("exclude_kernel %llu\\n", flags);
                    memset(&a, 0, sizeof(a)); a.exclude_idle = 1;
                    memcpy(&flags, (char *) &a + offsetof(struct perf_event_attr, read_format) + 8, 8);
                    printf("exclude_idle %llu\\n", flags);
                    printf("CPU_CLOCK %d\\n", PERF_COUNT_SW_CPU_CLOCK);
                    return 0;
                }
                """);
        Path binary = dir.resolve("attr");
        run(dir, "cc", "-o", binary.toString(), source.toString());
        Map<String, Long> c = new HashMap<>();
        for (String line : run(dir, binary.toString()).split("\n")) {
            String[] parts = line.split(" ");
            c.put(parts[0], Long.parseLong(parts[1]));
        }
        assertEquals(PerfEvent.Attr.TYPE, c.get("type"));
        assertEquals(PerfEvent.Attr.SIZE, c.get("size"));
        assertEquals(PerfEvent.Attr.CONFIG, c.get("config"));
        assertEquals(PerfEvent.Attr.READ_FORMAT, c.get("read_format"));
        assertEquals(PerfEvent.Attr.FLAGS, c.get("read_format") + 8, "the bit fields follow read_format");
        assertEquals(PerfEvent.Attr.CONFIG1, c.get("config1"));
        assertEquals(PerfEvent.Attr.CONFIG2, c.get("config2"));
        assertEquals(offset("wakeup_events"), c.get("wakeup_events"));
        assertEquals(offset("sample_regs_intr"), c.get("sample_regs_intr"));
        assertEquals(offset("aux_watermark"), c.get("aux_watermark"));
        assertEquals(offset("sample_max_stack"), c.get("sample_max_stack"));
        assertEquals(PerfEvent.Attr.LAYOUT.byteSize(), c.get("VER5"), "the size Java passes is PERF_ATTR_SIZE_VER5");
        assertEquals(PerfEvent.TYPE_HARDWARE, c.get("HARDWARE"));
        assertEquals(PerfEvent.TYPE_SOFTWARE, c.get("SOFTWARE"));
        assertEquals(PerfEvent.TYPE_HW_CACHE, c.get("HW_CACHE"));
        assertEquals(PerfEvent.TYPE_RAW, c.get("RAW"));
        assertEquals(PerfEvent.FORMAT_TOTAL_TIME_ENABLED, c.get("ENABLED"));
        assertEquals(PerfEvent.FORMAT_TOTAL_TIME_RUNNING, c.get("RUNNING"));
        assertEquals(PerfEvent.FLAG_FD_CLOEXEC, c.get("CLOEXEC"));
        assertEquals(PerfEvent.Attr.FLAG_DISABLED, c.get("disabled"));
        assertEquals(PerfEvent.Attr.FLAG_INHERIT, c.get("inherit"));
        assertEquals(PerfEvent.Attr.FLAG_EXCLUDE_HV, c.get("exclude_hv"));
        assertEquals(PerfEvent.Attr.FLAG_EXCLUDE_KERNEL, c.get("exclude_kernel"));
        assertEquals(PerfEvent.Attr.FLAG_EXCLUDE_IDLE, c.get("exclude_idle"));
        assertEquals(PerfEvent.SW_CPU_CLOCK, c.get("CPU_CLOCK"));
        assertEquals(PerfEvent.Attr.SAMPLE_PERIOD, c.get("sample_period"));
    }

    private static long offset(String field) {
        return PerfEvent.Attr.LAYOUT.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement(field));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor() == 0, String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
