package dev.infertop.model;

import dev.infertop.io.ConfigFiles;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GraphRuntimesTest {
    @Test
    void theShippedDescriptionNamesLlamaCppsTensors() {
        GraphRuntimes shipped = ConfigFiles.graphRuntimes();
        assertEquals("llama.cpp", shipped.runtimeName(1));
        assertTrue(shipped.names().contains(new GraphRuntimes.Name(1, GraphNameKind.TOKEN_EMBEDDING,
                "token_embd.weight")));
        assertTrue(shipped.names().contains(new GraphRuntimes.Name(1, GraphNameKind.POSITIONS, "inp_pos")));
        assertTrue(shipped.names().contains(new GraphRuntimes.Name(1, GraphNameKind.KV_MASK, "KQ_mask")));
        assertTrue(shipped.names().contains(new GraphRuntimes.Name(1, GraphNameKind.OUTPUT, "result_output")));
    }

    @Test
    void aThirdRuntimeIsLinesOfTheFileAndAPrefixNamedTwiceIsTheFirsts() {
        GraphRuntimes runtimes = GraphRuntimes.parse("""
                llama.cpp token-embedding token_embd.weight
                whisper.cpp token-embedding decoder.token_embedding.weight
                whisper.cpp encoder-input mel
                ollama token-embedding token_embd.weight
                """);
        assertEquals(List.of("llama.cpp", "whisper.cpp", "ollama"), runtimes.runtimes());
        assertEquals(List.of(new GraphRuntimes.Name(1, GraphNameKind.TOKEN_EMBEDDING, "token_embd.weight"),
                new GraphRuntimes.Name(2, GraphNameKind.TOKEN_EMBEDDING, "decoder.token_embedding.weight"),
                new GraphRuntimes.Name(2, GraphNameKind.ENCODER_INPUT, "mel")), runtimes.names());
        assertEquals("whisper.cpp", runtimes.runtimeName(2));
        assertEquals("unknown", runtimes.runtimeName(0));
        assertEquals("unknown", runtimes.runtimeName(9));
    }

    @Test
    void aBadLineIsOneClearMessage() {
        var e = assertThrows(IllegalArgumentException.class, () -> GraphRuntimes.parse("llama.cpp tokens x"));
        assertTrue(e.getMessage().startsWith("text:1: unknown kind 'tokens'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GraphRuntimes.parse(
                "llama.cpp positions " + "p".repeat(48)));
        assertTrue(e.getMessage().contains("1 to 47 printable ASCII"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GraphRuntimes.parse("llama.cpp positions"));
    }
}
