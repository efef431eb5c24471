package dev.infertop.ffi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiles against the host's linux/bpf.h and checks the bpf_prog_info fields Java reads. */
class BpfProgInfoTest {
    @Test
    void progInfoOffsetsMatchLinuxBpfH() throws Exception {
        Path dir = Files.createTempDirectory("infertop-proginfo");
        Path source = dir.resolve("info.c");
        Files.writeString(source, """
                #include <stddef.h>
                #include <stdio.h>
                #include <linux/bpf.h>
                int main(void) {
                    printf("run_time_ns %zu\\n", offsetof(struct bpf_prog_info, run_time_ns));
                    printf("run_cnt %zu\\n", offsetof(struct bpf_prog_info, run_cnt));
                    printf("BPF_STATS_RUN_TIME %d\\n", (int) BPF_STATS_RUN_TIME);
                    return 0;
                }
                """);
        Path binary = dir.resolve("info");
        run(dir, "cc", "-o", binary.toString(), source.toString());
        Map<String, Long> c = new HashMap<>();
        for (String line : run(dir, binary.toString()).split("\n")) {
            String[] parts = line.split(" ");
            c.put(parts[0], Long.parseLong(parts[1]));
        }
        assertEquals(LibBpf.ProgInfo.RUN_TIME_NS, c.get("run_time_ns"));
        assertEquals(LibBpf.ProgInfo.RUN_CNT, c.get("run_cnt"));
        assertEquals(LibBpf.ProgInfo.SIZE, c.get("run_cnt") + 8, "the size asked for ends with run_cnt");
        assertEquals(LibBpf.BPF_STATS_RUN_TIME, c.get("BPF_STATS_RUN_TIME"));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor() == 0, String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
