package dev.infertop.agg;

import dev.infertop.event.EventLayout;
import dev.infertop.event.GraphTokensRecord;
import dev.infertop.event.TraceListener;
import dev.infertop.model.Figures;
import dev.infertop.model.GraphRuntimes;
import dev.infertop.model.Layer;
import dev.infertop.model.WhisperTotals;

/**
 * whisper.cpp's units (token layer): its transcription calls (whisper.bpf.h's records: calls, audio, time inside)
 * and its graphs as its runtime description names them (graph_tokens.bpf.h's records whose runtime is
 * {@value #RUNTIME}: encoder passes, decoder calls and their tokens). Counts are kept once, cumulative; an
 * interval is the difference from the previous tick's. The graph records of other runtimes go on to {@code next}
 * (the token layer's own reader of graphs), untouched.
 */
public final class WhisperAggregator implements LayerAggregator, TraceListener {
    /** The runtime's name in config/runtimes.conf. */
    public static final String RUNTIME = "whisper.cpp";

    private final int runtime;
    private final TraceListener next;
    private long transcriptions;
    private long failedTranscriptions;
    private long audioSamples;
    private long samplesUnknown;
    private long transcribingNs;
    private long encoderPasses;
    private long decoderCalls;
    private long decoderTokens;
    private WhisperTotals atLastTick = WhisperTotals.EMPTY;

    /** {@code runtimes}: the descriptions the probes were given, which number whisper's records. */
    public WhisperAggregator(GraphRuntimes runtimes, TraceListener next) {
        this.runtime = runtimes.runtimes().indexOf(RUNTIME) + 1;
        this.next = next;
    }

    @Override
    public Layer layer() {
        return Layer.TOKEN;
    }

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_WHISPER_FULL || kind == EventLayout.EVENT_GRAPH_TOKENS ? this : null;
    }

    @Override
    public void onWhisperFull(int tid, long startNs, long endNs, int samples, int status) {
        transcriptions++;
        if (status != 0) {
            failedTranscriptions++;
        }
        if (samples < 0) {
            samplesUnknown++;
        } else {
            audioSamples += samples;
        }
        transcribingNs += Math.max(0, endNs - startNs);
    }

    @Override
    public void onGraphTokens(GraphTokensRecord graph) {
        if (runtime == 0 || graph.runtime() != runtime) {
            next.onGraphTokens(graph);
            return;
        }
        if (graph.tokens() >= 0) {
            decoderCalls++;
            decoderTokens += graph.tokens();
        } else if (graph.encoder()) {
            encoderPasses++;
        }
    }

    WhisperTotals totals() {
        return new WhisperTotals(transcriptions, failedTranscriptions, audioSamples, samplesUnknown, transcribingNs,
                encoderPasses, decoderCalls, decoderTokens);
    }

    static WhisperTotals since(WhisperTotals now, WhisperTotals before) {
        return new WhisperTotals(now.transcriptions() - before.transcriptions(),
                now.failedTranscriptions() - before.failedTranscriptions(),
                now.audioSamples() - before.audioSamples(), now.samplesUnknown() - before.samplesUnknown(),
                now.transcribingNs() - before.transcribingNs(), now.encoderPasses() - before.encoderPasses(),
                now.decoderCalls() - before.decoderCalls(), now.decoderTokens() - before.decoderTokens());
    }

    @Override
    public Figures addInterval(Figures figures) {
        WhisperTotals now = totals();
        WhisperTotals interval = since(now, atLastTick);
        atLastTick = now;
        return figures.withWhisper(interval);
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withWhisper(totals());
    }
}
