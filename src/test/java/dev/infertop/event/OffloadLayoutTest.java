package dev.infertop.event;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** struct offload_event in native/events.h against EventLayout's OFFLOAD_* (host C compiler). */
class OffloadLayoutTest {
    @Test
    void javaOffsetsMatchTheCHeader() throws Exception {
        Path dir = Files.createTempDirectory("infertop-offload-layout");
        Path source = dir.resolve("layout.c");
        Files.writeString(source, """
                #include <stddef.h>
                #include <stdio.h>
                #include "events.h"
                #define P(s, f) printf(#s "." #f " %zu\\n", offsetof(struct s, f))
                int main(void) {
                    printf("EVENT_OFFLOAD %d\\nOFFLOAD_NAME_BYTES %d\\n", EVENT_OFFLOAD, OFFLOAD_NAME_BYTES);
                    printf("OFFLOAD_SYNC %d\\nOFFLOAD_COPY %d\\n", OFFLOAD_SYNC, OFFLOAD_COPY);
                    printf("OFFLOAD_COPY_ASYNC %d\\nOFFLOAD_EVENT_SYNC %d\\n", OFFLOAD_COPY_ASYNC, OFFLOAD_EVENT_SYNC);
                    printf("OFFLOAD_VK_SUBMIT %d\\nOFFLOAD_VK_FENCE %d\\n", OFFLOAD_VK_SUBMIT, OFFLOAD_VK_FENCE);
                    P(offload_event, backend); P(offload_event, guid); P(offload_event, what);
                    P(offload_event, type); P(offload_event, ne); P(offload_event, bytes);
                    P(offload_event, src_name); P(offload_event, dst_name);
                    printf("offload_event %zu\\n", sizeof(struct offload_event));
                    return 0;
                }
                """);
        Path binary = dir.resolve("layout");
        run(dir, "cc", "-I", Path.of("native").toAbsolutePath().toString(), "-o", binary.toString(), source.toString());
        Map<String, Long> c = new HashMap<>();
        for (String line : run(dir, binary.toString()).split("\n")) {
            String[] parts = line.split(" ");
            c.put(parts[0], Long.parseLong(parts[1]));
        }
        assertEquals(EventLayout.EVENT_OFFLOAD, c.get("EVENT_OFFLOAD"));
        assertEquals(EventLayout.OFFLOAD_NAME_BYTES, c.get("OFFLOAD_NAME_BYTES"));
        assertEquals(EventLayout.OFFLOAD_SYNC, c.get("OFFLOAD_SYNC"));
        assertEquals(EventLayout.OFFLOAD_COPY, c.get("OFFLOAD_COPY"));
        assertEquals(EventLayout.OFFLOAD_COPY_ASYNC, c.get("OFFLOAD_COPY_ASYNC"));
        assertEquals(EventLayout.OFFLOAD_EVENT_SYNC, c.get("OFFLOAD_EVENT_SYNC"));
        assertEquals(EventLayout.OFFLOAD_VK_SUBMIT, c.get("OFFLOAD_VK_SUBMIT"));
        assertEquals(EventLayout.OFFLOAD_VK_FENCE, c.get("OFFLOAD_VK_FENCE"));
        assertEquals(EventLayout.OFFLOAD_BACKEND, c.get("offload_event.backend"));
        assertEquals(EventLayout.OFFLOAD_GUID, c.get("offload_event.guid"));
        assertEquals(EventLayout.OFFLOAD_WHAT, c.get("offload_event.what"));
        assertEquals(EventLayout.OFFLOAD_TYPE, c.get("offload_event.type"));
        assertEquals(EventLayout.OFFLOAD_NE, c.get("offload_event.ne"));
        assertEquals(EventLayout.OFFLOAD_BYTES, c.get("offload_event.bytes"));
        assertEquals(EventLayout.OFFLOAD_SRC_NAME, c.get("offload_event.src_name"));
        assertEquals(EventLayout.OFFLOAD_DST_NAME, c.get("offload_event.dst_name"));
        assertEquals(EventLayout.OFFLOAD_SIZE, c.get("offload_event"));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor() == 0, String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
