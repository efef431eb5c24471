package dev.infertop.model;

/**
 * Where a run's token figures come from: llama.cpp's API where the target calls it, the graphs where it does not.
 * The choice is the run's (it does not flip from tick to tick): the API once one of its calls was seen.
 */
public enum TokenSource {
    /** llama_decode / llama_process calls (their batches where they carry positions). */
    API("api", "tokens from llama.cpp's API"),
    /** No API call seen, graphs with a token embedding computed: the tokens are the graphs'. */
    GRAPHS("graphs", "llama_decode is not called: inlined or not used; tokens from the graphs"),
    /** Neither: nothing decoded yet, or a graph whose names no runtime's description knows. */
    NONE("none", "no tokens seen: no llama.cpp API call, no graph with a known token embedding"),
    /** A whisper.cpp program: no llama.cpp tokens; its own units ({@link WhisperTotals}) instead. */
    WHISPER("whisper.cpp", "whisper.cpp: its units are encoder passes, audio and decoder tokens (whisper)");

    private final String word;
    private final String state;

    TokenSource(String word, String state) {
        this.word = word;
        this.state = state;
    }

    /** The JSON value and Prometheus label: api, graphs, none, whisper.cpp. */
    public String word() {
        return word;
    }

    /** The sentence the live view's header, the text view and the JSON state say. */
    public String state() {
        return state;
    }
}
