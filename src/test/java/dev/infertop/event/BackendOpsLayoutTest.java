package dev.infertop.event;

import dev.infertop.agg.BackendOpsAggregator;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** struct backend_ops_event in native/events.h against EventLayout's BACKEND_OPS_* (host C compiler). */
class BackendOpsLayoutTest {
    @Test
    void javaOffsetsMatchTheCHeader() throws Exception {
        Path dir = Files.createTempDirectory("infertop-backend-layout");
        Path source = dir.resolve("layout.c");
        Files.writeString(source, """
                #include <stddef.h>
                #include <stdio.h>
                #include "events.h"
                #define P(s, f) printf(#s "." #f " %zu\\n", offsetof(struct s, f))
                int main(void) {
                    printf("EVENT_BACKEND_OPS %d\\nBACKEND_OP_SLOTS %d\\n", EVENT_BACKEND_OPS, BACKEND_OP_SLOTS);
                    P(backend_ops_event, backend); P(backend_ops_event, guid); P(backend_ops_event, n_nodes);
                    P(backend_ops_event, counted); P(backend_ops_event, op_nodes);
                    printf("backend_ops_event %zu\\n", sizeof(struct backend_ops_event));
                    printf("EVENT_BACKEND_DISPATCH %d\\n", EVENT_BACKEND_DISPATCH);
                    P(backend_dispatch_event, backend); P(backend_dispatch_event, guid);
                    P(backend_dispatch_event, n_nodes); P(backend_dispatch_event, calls);
                    P(backend_dispatch_event, op_calls); P(backend_dispatch_event, op_fused);
                    printf("backend_dispatch_event %zu\\n", sizeof(struct backend_dispatch_event));
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
        assertEquals(EventLayout.EVENT_BACKEND_OPS, c.get("EVENT_BACKEND_OPS"));
        assertEquals(EventLayout.BACKEND_OP_SLOTS, c.get("BACKEND_OP_SLOTS"));
        assertEquals(EventLayout.BACKEND_OPS_BACKEND, c.get("backend_ops_event.backend"));
        assertEquals(EventLayout.BACKEND_OPS_GUID, c.get("backend_ops_event.guid"));
        assertEquals(EventLayout.BACKEND_OPS_N_NODES, c.get("backend_ops_event.n_nodes"));
        assertEquals(EventLayout.BACKEND_OPS_COUNTED, c.get("backend_ops_event.counted"));
        assertEquals(EventLayout.BACKEND_OPS_OP_NODES, c.get("backend_ops_event.op_nodes"));
        assertEquals(EventLayout.BACKEND_OPS_SIZE, c.get("backend_ops_event"));
        assertEquals(BackendOpsAggregator.OP_SLOTS, EventLayout.BACKEND_OP_SLOTS);
        assertEquals(EventLayout.EVENT_BACKEND_DISPATCH, c.get("EVENT_BACKEND_DISPATCH"));
        assertEquals(EventLayout.BACKEND_DISPATCH_BACKEND, c.get("backend_dispatch_event.backend"));
        assertEquals(EventLayout.BACKEND_DISPATCH_GUID, c.get("backend_dispatch_event.guid"));
        assertEquals(EventLayout.BACKEND_DISPATCH_N_NODES, c.get("backend_dispatch_event.n_nodes"));
        assertEquals(EventLayout.BACKEND_DISPATCH_CALLS, c.get("backend_dispatch_event.calls"));
        assertEquals(EventLayout.BACKEND_DISPATCH_OP_CALLS, c.get("backend_dispatch_event.op_calls"));
        assertEquals(EventLayout.BACKEND_DISPATCH_OP_FUSED, c.get("backend_dispatch_event.op_fused"));
        assertEquals(EventLayout.BACKEND_DISPATCH_SIZE, c.get("backend_dispatch_event"));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor() == 0, String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
