package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;
import dev.infertop.model.WhisperTotals;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A whisper.cpp program (whisper-cli: no llama.cpp call) shows whisper's units where llama.cpp's tokens per second
 * would be a silent 0: the header's speed rows, the JSON's {@code whisper} and null llama.cpp rates.
 */
class WhisperViewTest {
    /** 3 s of audio transcribed in 2 s (1.5x real time), 1 encoder pass, 21 decoder calls of 66 tokens. */
    static final WhisperTotals RUN = new WhisperTotals(1, 0, 48_000, 0, 2_000_000_000L, 1, 21, 66);

    /** The token layer as infertop attaches it to whisper-cli: whisper's entry point, no llama.cpp call. */
    static Snapshot whisperCli(WhisperTotals whisper) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<LayerStatus> layers = new ArrayList<>();
        for (LayerStatus layer : s.layers()) {
            layers.add(layer.layer() != Layer.TOKEN ? layer : new LayerStatus(Layer.TOKEN, LayerStatus.State.ON, "",
                    List.of("whisper_full_with_state (entry and return) @ libwhisper.so.1.9.5+0x4e6a4")));
        }
        return s.withLayers(layers).withFigures(f -> f.withTokens(TokenTotals.EMPTY).withWhisper(whisper));
    }

    @Test
    void theHeaderShowsEncoderPassesRealTimeAndDecoderTokensInsteadOfTokensPerSecond() {
        DefaultVirtualTerminal terminal = Fixtures.drawn(whisperCli(RUN), new UiState(), 100, 30);
        String encoder = Fixtures.row(terminal, 2);
        String decoder = Fixtures.row(terminal, 3);
        assertTrue(encoder.startsWith("encoder      1 passes  audio 3.0 s  1.50x real time"), encoder);
        assertTrue(decoder.startsWith("decoder     66 tokens in 21 calls"), decoder);
        for (int row = 0; row < 6; row++) {
            assertFalse(Fixtures.row(terminal, row).contains("tok/s") && !Fixtures.row(terminal, row)
                    .startsWith("decoder"), "no llama.cpp rate: " + Fixtures.row(terminal, row));
        }
    }

    @Test
    void beforeItsFirstTranscriptionTheHeaderSaysThereIsNoRateYet() {
        DefaultVirtualTerminal terminal = Fixtures.drawn(whisperCli(WhisperTotals.EMPTY), new UiState(), 100, 30);
        String encoder = Fixtures.row(terminal, 2);
        assertTrue(encoder.startsWith("encoder      0 passes  audio 0.0 s  real time ? (no transcription ended)"),
                encoder);
        assertFalse(Fixtures.row(terminal, 3).contains("0.0 tok/s"), Fixtures.row(terminal, 3));
    }

    @Test
    void theJsonHasWhispersUnitsAndNoLlamaRates() throws Exception {
        JsonNode line = new ObjectMapper().readTree(JsonLinesView.toJson(whisperCli(RUN)));
        JsonNode whisper = line.path(JsonSchema.WHISPER.key());
        assertEquals(1, whisper.path(JsonSchema.WhisperField.ENCODER_PASSES.key()).asLong());
        assertEquals(66, whisper.path(JsonSchema.WhisperField.DECODER_TOKENS.key()).asLong());
        assertEquals(21, whisper.path(JsonSchema.WhisperField.DECODER_CALLS.key()).asLong());
        assertEquals(3.0, whisper.path(JsonSchema.WhisperField.AUDIO_S.key()).asDouble());
        assertEquals(1.5, whisper.path(JsonSchema.WhisperField.REAL_TIME_FACTOR.key()).asDouble());
        assertTrue(line.path(JsonSchema.DECODE_TOKENS_PER_S.key()).isNull(), line.toString());
        assertTrue(line.path(JsonSchema.PREFILL_TOKENS_PER_S.key()).isNull(), line.toString());
        assertEquals("whisper.cpp", line.path(JsonSchema.TOKEN_SOURCE.key()).asText(), line.toString());
        assertFalse(line.path(JsonSchema.TOKEN_STATE.key()).asText().contains("no tokens seen"), line.toString());
        JsonNode before = new ObjectMapper().readTree(JsonLinesView.toJson(whisperCli(WhisperTotals.EMPTY)))
                .path(JsonSchema.WHISPER.key());
        assertTrue(before.path(JsonSchema.WhisperField.REAL_TIME_FACTOR.key()).isNull(), before.toString());
        // A llama.cpp program has no whisper object and its rates as numbers.
        JsonNode llama = new ObjectMapper().readTree(JsonLinesView.toJson(Fixtures.snapshot(LayerStatus.State.ON)));
        assertTrue(llama.path(JsonSchema.WHISPER.key()).isMissingNode(), llama.toString());
        assertTrue(llama.path(JsonSchema.DECODE_TOKENS_PER_S.key()).isNumber(), llama.toString());
    }
}
