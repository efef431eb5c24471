package dev.infertop.model;

/**
 * whisper.cpp's own units over some span (one interval, or the run): what a speech-to-text engine does, where
 * llama.cpp's tokens per second would read as an idle engine. From two sources, each said: its transcription calls
 * (whisper_full_with_state, the audio its mel spectrogram was given) and its graphs (the runtime description's names:
 * a conv graph with the "mel" input is an encoder pass, a graph whose token embedding GET_ROWS reads "embd" a decoder
 * call of that many tokens).
 *
 * @param transcriptions        whisper_full_with_state calls that returned in the span
 * @param failedTranscriptions  of those, the ones that returned non-zero
 * @param audioSamples          16 kHz samples the transcriptions were given (those whose mel call was seen)
 * @param samplesUnknown        transcriptions whose samples were not seen (no mel call inside: samples passed before)
 * @param transcribingNs        wall time inside those calls, summed
 * @param encoderPasses         graphs with whisper's encoder input (one conv graph per pass of its encoder)
 * @param decoderCalls          graphs with whisper's decoder token ids
 * @param decoderTokens         tokens those decoder calls computed (beams and prompt included)
 */
public record WhisperTotals(long transcriptions, long failedTranscriptions, long audioSamples, long samplesUnknown,
                            long transcribingNs, long encoderPasses, long decoderCalls, long decoderTokens) {

    public static final WhisperTotals EMPTY = new WhisperTotals(0, 0, 0, 0, 0, 0, 0, 0);
    /** whisper.cpp's WHISPER_SAMPLE_RATE: the only rate it transcribes. */
    public static final int SAMPLE_RATE_HZ = 16_000;
    /** The symbol whose probe says the program is whisper.cpp (the token layer's entry point there). */
    public static final String ENTRY_POINT = "whisper_full_with_state";

    /** Whether anything of whisper's was seen in the span. */
    public boolean seen() {
        return transcriptions > 0 || encoderPasses > 0 || decoderCalls > 0;
    }

    public double audioSeconds() {
        return (double) audioSamples / SAMPLE_RATE_HZ;
    }

    /**
     * Audio seconds transcribed per second inside the transcription calls (above 1: faster than real time); NaN
     * when no transcription with known samples returned in the span (there is no rate to give, not a zero).
     */
    public double realTimeFactor() {
        long known = transcriptions - samplesUnknown;
        if (known <= 0 || transcribingNs <= 0 || audioSamples <= 0) {
            return Double.NaN;
        }
        return audioSeconds() / (transcribingNs / 1e9);
    }

    /** Decoder tokens per second of the span ({@code spanNs}): NaN for an empty span. */
    public double decoderTokensPerSecond(long spanNs) {
        return spanNs <= 0 ? Double.NaN : decoderTokens / (spanNs / 1e9);
    }

    /** A whisper.cpp program that made no llama.cpp call (whisper-talk-llama makes both: its llama figures apply). */
    public static boolean isWhisperOnly(Snapshot s) {
        return isWhisperProgram(s) && s.total().tokens().decodeCalls() == 0;
    }

    /** The token source to show for {@code s}: {@link TokenSource#WHISPER} for a whisper.cpp-only program. */
    public static TokenSource tokenSource(Snapshot s) {
        return isWhisperOnly(s) ? TokenSource.WHISPER : s.total().tokens().source();
    }

    /**
     * Whether {@code s} is of a whisper.cpp program: its token layer probes whisper's transcription call, or whisper's
     * graphs were seen. Then whisper's units are shown instead of llama.cpp's tokens per second.
     */
    public static boolean isWhisperProgram(Snapshot s) {
        if (s.total().whisper().seen()) {
            return true;
        }
        for (LayerStatus layer : s.layers()) {
            if (layer.layer() == Layer.TOKEN && layer.probes().stream().anyMatch(p -> p.startsWith(ENTRY_POINT))) {
                return true;
            }
        }
        return false;
    }
}
