package dev.infertop.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.SafeText;

/**
 * JSON whose bytes hold no character that acts on a terminal: the guard of every JSON infertop writes (JSON
 * Lines on stdout, summary.json, trace.json, report --json). Target strings are already made visible where
 * they enter ({@link SafeText}); anything that slipped past is written as a JSON {@code \\uNNNN} escape
 * instead of raw: Jackson escapes C0 by itself, this adds DEL, C1 and the invisible format characters
 * (bidirectional overrides). The output stays valid JSON and decodes to the same strings.
 */
public final class SafeJson {
    private SafeJson() {}

    /** Jackson's standard escapes plus every character {@link SafeText} would not show raw. */
    static final class Escapes extends CharacterEscapes {
        private final int[] ascii = standardAsciiEscapesForJSON();

        Escapes() {
            ascii[0x7f] = ESCAPE_STANDARD;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            // null: Jackson writes the character as it is. ESCAPE_STANDARD for a non-ASCII character is not
            // honoured through this method, so the \\uNNNN form is spelled out here.
            if (ch >= 0x80 && SafeText.isUnsafe(ch)) {
                return new com.fasterxml.jackson.core.io.SerializedString(String.format("\\u%04x", ch));
            }
            return null;
        }
    }

    private static final JsonFactory FACTORY = new JsonFactory().setCharacterEscapes(new Escapes());
    private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

    /** The factory for streaming writers (trace.json). */
    public static JsonFactory factory() {
        return FACTORY;
    }

    /** The mapper for tree writers (summary.json, report --json). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * A tree read from a file someone else may have written (a snapshot's summary.json) with every string and
     * field name made visible ({@link SafeText}): the boundary where a file's text enters, like the target's.
     */
    public static JsonNode sanitised(JsonNode node) {
        if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
            com.fasterxml.jackson.databind.node.ObjectNode copy = MAPPER.createObjectNode();
            object.properties().forEach(field -> copy.set(SafeText.of(field.getKey()), sanitised(field.getValue())));
            return copy;
        }
        if (node instanceof com.fasterxml.jackson.databind.node.ArrayNode array) {
            com.fasterxml.jackson.databind.node.ArrayNode copy = MAPPER.createArrayNode();
            array.forEach(element -> copy.add(sanitised(element)));
            return copy;
        }
        if (node != null && node.isTextual() && !SafeText.isSafe(node.textValue())) {
            return com.fasterxml.jackson.databind.node.TextNode.valueOf(SafeText.of(node.textValue()));
        }
        return node;
    }

    /** {@code node} as one line of JSON. */
    public static String line(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a tree of plain nodes always serialises", e);
        }
    }
}
