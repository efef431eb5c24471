package dev.infertop.model;

/**
 * The token figures the graphs gave over some span, whatever the run's {@link TokenSource}: beside the API's they
 * show the two agree (or by how much they do not). Counted by the same rule as the API's tokens (man/infertop.1,
 * "What a generated token is").
 *
 * @param graphs          graphs computed with a token embedding (decode passes)
 * @param promptTokens    their prompt tokens
 * @param generatedTokens their generated tokens
 * @param positionsRead   of those graphs, the ones whose positions were read (host memory)
 * @param encoderPasses   graphs with an encoder input (an encoder pass: no decode figure)
 * @param requests        requests told from the graphs (agg.GraphRequests: one sequence at a time), -1 where a
 *                        graph stepped several sequences at once and requests cannot be told apart
 * @param requestTtft     their TTFT, from a prompt's first graph to its first output
 * @param requestTpot     their TPOT, from each output to the next
 */
public record GraphTokenCounts(long graphs, long promptTokens, long generatedTokens, long positionsRead,
                               long encoderPasses, long requests, LatencySummary requestTtft,
                               LatencySummary requestTpot) {
    public static final GraphTokenCounts EMPTY = new GraphTokenCounts(0, 0, 0, 0, 0);

    public GraphTokenCounts {
        requestTtft = requestTtft == null ? LatencySummary.EMPTY : requestTtft;
        requestTpot = requestTpot == null ? LatencySummary.EMPTY : requestTpot;
    }

    /** Counts without requests (none told yet). */
    public GraphTokenCounts(long graphs, long promptTokens, long generatedTokens, long positionsRead,
                            long encoderPasses) {
        this(graphs, promptTokens, generatedTokens, positionsRead, encoderPasses, 0, LatencySummary.EMPTY,
                LatencySummary.EMPTY);
    }

    /** Whether the graphs told requests apart. */
    public boolean requestsKnown() {
        return requests >= 0;
    }

    /** The counts since {@code earlier}; the request latencies are this span's, given by the caller. */
    public GraphTokenCounts since(GraphTokenCounts earlier, LatencySummary spanTtft, LatencySummary spanTpot) {
        return new GraphTokenCounts(graphs - earlier.graphs, promptTokens - earlier.promptTokens,
                generatedTokens - earlier.generatedTokens, positionsRead - earlier.positionsRead,
                encoderPasses - earlier.encoderPasses,
                requests < 0 || earlier.requests < 0 ? -1 : requests - earlier.requests, spanTtft, spanTpot);
    }
}
