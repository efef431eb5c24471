package dev.infertop.process;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OwnResidentMemoryTest {
    private static long pages(String line) throws IOException {
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        return OwnResidentMemory.parseResidentPages(bytes, bytes.length);
    }

    @Test
    void theSecondFieldInPages() throws IOException {
        assertEquals(23456, pages("1234567 23456 3456 7 0 89012 0\n"));
        assertThrows(IOException.class, () -> pages("1234567\n"));
        assertThrows(IOException.class, () -> pages("1234567 12x4 0\n"));
        assertThrows(IOException.class, () -> pages(""));
    }

    @Test
    void agreesWithStatusReadAgainAndAgain() throws IOException {
        try (OwnResidentMemory memory = new OwnResidentMemory()) {
            for (int i = 0; i < 3; i++) { // the same descriptor, read at offset 0 each time
                long fromStatm = memory.bytes();
                long fromStatus = 0;
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        fromStatus = Long.parseLong(line.replaceAll("\\D", "")) * 1024;
                    }
                }
                assertTrue(fromStatm > 1 << 20, "a JVM holds more than a MB: " + fromStatm);
                // Read a moment apart: the heap may have grown by a few pages between the two.
                assertEquals(fromStatus, fromStatm, 0.1 * fromStatus, "statm " + fromStatm + " vs status " + fromStatus);
            }
        }
    }
}
