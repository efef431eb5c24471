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
 */
public record GraphTokenCounts(long graphs, long promptTokens, long generatedTokens, long positionsRead,
                               long encoderPasses) {
    public static final GraphTokenCounts EMPTY = new GraphTokenCounts(0, 0, 0, 0, 0);

    public GraphTokenCounts since(GraphTokenCounts earlier) {
        return new GraphTokenCounts(graphs - earlier.graphs, promptTokens - earlier.promptTokens,
                generatedTokens - earlier.generatedTokens, positionsRead - earlier.positionsRead,
                encoderPasses - earlier.encoderPasses);
    }
}
