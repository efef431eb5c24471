package dev.infertop.agg;

import dev.infertop.model.GraphNameKind;
import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import dev.infertop.event.EventLayout;
import dev.infertop.event.GraphTokensRecord;
import dev.infertop.event.TraceListener;
import dev.infertop.io.ConfigFiles;
import dev.infertop.model.GraphRuntimes;
import dev.infertop.model.Layer;
import dev.infertop.model.WhisperTotals;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * whisper.cpp's units from its records, with exact numbers: one transcription of whisper-cli's shape (an encoder
 * pass of three graphs, of which only the conv graph has the mel input; a prompt, beams and single steps).
 */
class WhisperAggregatorTest {
    private static final GraphRuntimes RUNTIMES = ConfigFiles.graphRuntimes();
    private static final int WHISPER = RUNTIMES.runtimes().indexOf(WhisperAggregator.RUNTIME) + 1;
    private static final int LLAMA = RUNTIMES.runtimes().indexOf("llama.cpp") + 1;

    private static GraphTokensRecord graph(int runtime, int tokens, boolean encoder) {
        return new GraphTokensRecord().set(7, 0, 1000, 0x1000, tokens, -1, tokens, 0, 0, -1, runtime,
                EventLayout.GRAPH_LEVEL_SCHED, encoder ? EventLayout.GRAPH_TOKENS_ENCODER : 0, 0);
    }

    @Test
    void theShippedDescriptionNamesWhispersInputs() {
        assertTrue(WHISPER > 0, "whisper.cpp in config/runtimes.conf: " + RUNTIMES.runtimes());
        assertTrue(RUNTIMES.names().contains(new GraphRuntimes.Name(WHISPER,
                GraphNameKind.TOKEN_IDS, "embd")), RUNTIMES.names().toString());
        assertTrue(RUNTIMES.names().contains(new GraphRuntimes.Name(WHISPER,
                GraphNameKind.ENCODER_INPUT, "mel")), RUNTIMES.names().toString());
    }

    @Test
    void encoderPassesDecoderTokensAudioAndTheRealTimeFactor() {
        List<GraphTokensRecord> passedOn = new ArrayList<>();
        WhisperAggregator whisper = new WhisperAggregator(RUNTIMES, new TraceListener() {
            @Override
            public void onGraphTokens(GraphTokensRecord graph) {
                passedOn.add(graph);
            }
        });
        assertSame(Layer.TOKEN, whisper.layer());
        assertSame(whisper, whisper.records(EventLayout.EVENT_WHISPER_FULL));
        assertSame(whisper, whisper.records(EventLayout.EVENT_GRAPH_TOKENS));
        whisper.onGraphTokens(graph(WHISPER, -1, true)); // conv graph: the pass
        whisper.onGraphTokens(graph(WHISPER, 3, false)); // the prompt: sot and two more
        for (int step = 0; step < 4; step++) {
            whisper.onGraphTokens(graph(WHISPER, 5, false)); // five beams at once
        }
        whisper.onGraphTokens(graph(WHISPER, 1, false));
        whisper.onGraphTokens(graph(LLAMA, 32, false)); // another runtime's: not whisper's, passed on
        // 3 s of audio (48000 samples) transcribed in 2 s, returned 0
        whisper.onWhisperFull(7, 1_000_000_000L, 3_000_000_000L, 48_000, 0);
        assertEquals(1, passedOn.size());
        assertEquals(32, passedOn.getFirst().tokens());

        WhisperTotals first = whisper.addInterval(Fixtures.snapshot(
                LayerStatus.State.ON).interval()).whisper();
        assertEquals(new WhisperTotals(1, 0, 48_000, 0, 2_000_000_000L, 1, 6, 24), first);
        assertEquals(3.0, first.audioSeconds());
        assertEquals(1.5, first.realTimeFactor(), 1e-12);
        assertEquals(12.0, first.decoderTokensPerSecond(2_000_000_000L), 1e-12);

        // A second transcription whose mel spectrogram was computed before (no samples seen), and a failed one.
        whisper.onWhisperFull(7, 4_000_000_000L, 5_000_000_000L, -1, 0);
        whisper.onWhisperFull(7, 6_000_000_000L, 6_500_000_000L, 16_000, -6);
        var figures = Fixtures.snapshot(LayerStatus.State.ON).interval();
        WhisperTotals second = whisper.addInterval(figures).whisper();
        assertEquals(new WhisperTotals(2, 1, 16_000, 1, 1_500_000_000L, 0, 0, 0), second);
        WhisperTotals run = whisper.addTotal(figures).whisper();
        assertEquals(new WhisperTotals(3, 1, 64_000, 1, 3_500_000_000L, 1, 6, 24), run);
    }

    @Test
    void noTranscriptionIsNoRateNotZero() {
        WhisperTotals graphsOnly = new WhisperTotals(0, 0, 0, 0, 0, 2, 21, 66);
        assertTrue(graphsOnly.seen());
        assertTrue(Double.isNaN(graphsOnly.realTimeFactor()));
        assertTrue(Double.isNaN(WhisperTotals.EMPTY.decoderTokensPerSecond(0)));
        assertTrue(!WhisperTotals.EMPTY.seen());
    }
}
