package dev.infertop.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** JSON infertop writes holds no raw control character, stays valid and decodes to the same strings. */
class SafeJsonTest {
    private static final String HOSTILE = "llama\u001b]0;pwned\u0007 \u007f \u009b2J \u0085 \u202efdp \u2028 模型 é";

    private static void assertNoRawControl(byte[] utf8) {
        String text = new String(utf8, StandardCharsets.UTF_8);
        text.codePoints().forEach(cp -> assertFalse(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)
                || cp == 0x202e || cp == 0x2028, "raw U+" + Integer.toHexString(cp) + " in " + text));
    }

    @Test
    void aLineEscapesEveryControlAndReadsBackTheSame() throws Exception {
        ObjectNode node = new ObjectMapper().createObjectNode().put("command", HOSTILE);
        String line = SafeJson.line(node);
        assertNoRawControl(line.getBytes(StandardCharsets.UTF_8));
        assertTrue(line.contains("\\u001B]0;pwned\\u0007") || line.contains("\\u001b]0;pwned\\u0007"), line);
        assertTrue(line.contains("\\u009b2J") && line.contains("\\u202efdp") && line.contains("模型 é"), line);
        assertEquals(HOSTILE, new ObjectMapper().readTree(line).path("command").asText());
    }

    @Test
    void theStreamingFactoryEscapesToo() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (var json = SafeJson.factory().createGenerator(bytes)) {
            json.writeStartObject();
            json.writeStringField("name", HOSTILE);
            json.writeEndObject();
        }
        assertNoRawControl(bytes.toByteArray());
        assertEquals(HOSTILE, new ObjectMapper().readTree(bytes.toByteArray()).path("name").asText());
    }

    @Test
    void aTreeFromAFileHasItsStringsAndFieldNamesMadeVisible() throws Exception {
        JsonNode read = new ObjectMapper().readTree(
                "{\"target\":{\"command\":\"x\\u001b]0;t\\u0007\",\"libs\":[\"/l\\u009b.so\",3]},\"k\\u007f\":1}");
        JsonNode safe = SafeJson.sanitised(read);
        assertEquals("x\\x1b]0;t\\x07", safe.path("target").path("command").asText());
        assertEquals("/l\\x9b.so", safe.path("target").path("libs").get(0).asText());
        assertEquals(3, safe.path("target").path("libs").get(1).asInt());
        assertEquals(1, safe.path("k\\x7f").asInt());
    }
}
