package dev.infertop.io;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordJsonTest {
    record Size(long bytes, long elements) {}

    record Site(String what, long fileOffset, String reason) {}

    record Everything(int version, long big, double rate, boolean flag, String name, List<String> names,
                      List<Size> sizes, Map<String, List<Site>> sites, Size one, List<Integer> numbers) {}

    record Checked(int positive) {
        Checked {
            if (positive <= 0) {
                throw new IllegalArgumentException("not positive: " + positive);
            }
        }
    }

    private static final ObjectMapper JACKSON = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private static <T extends Record> T read(String json, Class<T> type) throws RecordJson.Malformed {
        return RecordJson.read(json.getBytes(StandardCharsets.UTF_8), type);
    }

    private static Everything sample() {
        Map<String, List<Site>> sites = new LinkedHashMap<>();
        sites.put("fn:llama_decode:handle_decode_enter", List.of(new Site("llama_decode", 1955200, "on push \"%rbx\"\n")));
        sites.put("empty", List.of());
        return new Everything(3, Long.MAX_VALUE, 1.6302117777750044E10, true, "é ☃ \u0001 \\ /",
                Arrays.asList("f32", null, "q4_0"), Arrays.asList(new Size(18, 32), null), sites, new Size(-1, 0),
                List.of(Integer.MIN_VALUE, 0, 7));
    }

    @Test
    void readsWhatJacksonWritesAsJacksonReadsIt() throws Exception {
        Everything written = sample();
        for (ObjectMapper writer : List.of(JACKSON, new ObjectMapper().enable(
                com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT))) {
            byte[] json = writer.writeValueAsBytes(written);
            assertEquals(written, RecordJson.read(json, Everything.class));
            assertEquals(JACKSON.readValue(json, Everything.class), RecordJson.read(json, Everything.class));
        }
    }

    @Test
    void unknownPropertiesAreIgnoredAndMissingOnesAreDefaults() throws Exception {
        Everything read = read("{\"extra\": {\"deep\": [1, 2.5e3, null, \"x\", true]}, \"version\": 2}", Everything.class);
        assertEquals(2, read.version());
        assertEquals(0L, read.big());
        assertEquals(0.0, read.rate());
        assertEquals(false, read.flag());
        assertNull(read.name());
        assertNull(read.names());
        assertNull(read.sites());
        // as Jackson reads the same document
        assertEquals(JACKSON.readValue("{\"extra\": 1, \"version\": 2}", Everything.class),
                read("{\"extra\": 1, \"version\": 2}", Everything.class));
    }

    @Test
    void anythingElseIsMalformedWithWhere() {
        List<String> bad = List.of(
                "", "   ", "{", "{\"version\": 1", "{\"version\": 1,}", "{\"version\" 1}", "[]", "\"text\"",
                "{\"version\": 1} x", "{\"version\": \"1\"}", "{\"version\": 1.5}", "{\"version\": 2147483648}",
                "{\"big\": 9223372036854775808}", "{\"rate\": \"fast\"}", "{\"rate\": 1e}", "{\"flag\": 1}",
                "{\"name\": 3}", "{\"names\": \"a\"}", "{\"names\": [1]}", "{\"sizes\": [1]}", "{\"sites\": []}",
                "{\"one\": [1]}", "{\"name\": \"\\q\"}", "{\"name\": \"\\u12\"}", "{\"name\": \"a\u0001\"}",
                "{\"name\": \"open", "{\"version\": -}", "{\"version\": tru}", "{'version': 1}", "{\"version\": 01x}");
        for (String json : bad) {
            RecordJson.Malformed e = assertThrows(RecordJson.Malformed.class, () -> read(json, Everything.class),
                    json);
            assertTrue(!e.getMessage().isBlank(), json);
        }
    }

    @Test
    void aRecordThatRefusesItsValuesIsMalformed() throws Exception {
        assertEquals(new Checked(4), read("{\"positive\": 4}", Checked.class));
        RecordJson.Malformed refused = assertThrows(RecordJson.Malformed.class,
                () -> read("{\"positive\": 0}", Checked.class));
        assertTrue(refused.getMessage().contains("not positive"), refused.getMessage());
    }

    @Test
    void nestingDeeperThanTheLimitIsRefusedNotAStackOverflow() throws Exception {
        StringBuilder deep = new StringBuilder("{\"extra\": ");
        deep.append("[".repeat(100_000)).append("]".repeat(100_000)).append('}');
        RecordJson.Malformed e = assertThrows(RecordJson.Malformed.class, () -> read(deep.toString(), Checked.class));
        assertTrue(e.getMessage().contains("deeper than " + RecordJson.MAX_DEPTH), e.getMessage());
        StringBuilder fine = new StringBuilder("{\"positive\": 1, \"extra\": ");
        fine.append("[".repeat(RecordJson.MAX_DEPTH - 1)).append("]".repeat(RecordJson.MAX_DEPTH - 1)).append('}');
        assertEquals(new Checked(1), read(fine.toString(), Checked.class));
    }

    @Test
    void listsAreCopiesTheCallerMayKeep() throws Exception {
        Everything read = read("{\"numbers\": [1, 2, 3]}", Everything.class);
        assertEquals(List.of(1, 2, 3), read.numbers());
        assertTrue(read.numbers() instanceof ArrayList<?>);
    }
}
