package dev.infertop.agg;

import dev.infertop.model.LatencySummary;
import dev.infertop.model.Limits;
import dev.infertop.model.HistogramTag;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.BatchTokens;
import dev.infertop.event.EventLayout;
import dev.infertop.event.GraphTokensRecord;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.Figures;
import dev.infertop.model.GraphTokenCounts;
import dev.infertop.model.Layer;
import dev.infertop.model.SequenceStatus;
import dev.infertop.model.SpeculativeTotals;
import dev.infertop.model.TokenSource;
import dev.infertop.model.TokenTotals;
import org.HdrHistogram.Histogram;

import java.util.List;

/**
 * The token layer: tokens, TTFT and TPOT from two sources, llama.cpp's API (llama_decode / llama_process calls and
 * their batches) and the graphs (what a graph's token embedding, positions and output say: EVENT_GRAPH_TOKENS).
 * The API is the source where the target calls it; where it does not (llama_decode inlined by LTO, an engine that
 * drives ggml's scheduler itself, a runtime without llama.cpp) the graphs are, and the run's figures say so
 * ({@link TokenSource}). Both are counted all along, so a run where both exist shows whether they agree.
 *
 * <p>One rule for what a generated token is, on every path (man/infertop.1, "What a generated token is"): a
 * sequence's tokens up to and including its first output are prompt tokens, the tokens after it generated ones;
 * a sequence starts at position 0 (or where it is rewound). Where a batch tells each token's sequence and position
 * (SequenceTracker) that is applied per sequence; where it does not (llama_batch_get_one, a graph), a call or
 * graph of one token is a generated token unless its position is 0 (read from the graph's positions input, the one
 * the call computed), and a call or graph of several tokens holds a prompt chunk, except for the outputs beyond its
 * first one when the graph says how many outputs it computed (several sequences' steps batched together).
 *
 * <p>Definitions of the latencies without per-sequence batches: a call (graph) counted as generated is one TPOT
 * sample, one counted as prompt one TTFT sample. Single writer, the collector thread; no allocation per record.
 */
public final class TokenAggregator implements LayerAggregator, TraceListener, DecodeSource {
    private static final int SIGNIFICANT_DIGITS = 3;
    private static final int MAX_CONTEXTS = SequenceTracker.MAX_CONTEXTS;
    /** A sequence counts as recent in the requests panel for this long after its last decode. */
    private static final long RECENT_NS = 10_000_000_000L;

    /** Token counters from the API, kept once for the run; the interval's are the difference from the last tick's. */
    private final TokenCounter tokens = new TokenCounter();
    private final TokenCounter tokensAtLastTick = new TokenCounter();
    private final IntervalRecorder ttftRecorder = new IntervalRecorder(SIGNIFICANT_DIGITS);
    private final IntervalRecorder tpotRecorder = new IntervalRecorder(SIGNIFICANT_DIGITS);
    /** Per-sequence accounting of batches with per-token sequences and positions (llama-server, apps). */
    private final SequenceTracker sequences = new SequenceTracker(ttftRecorder, tpotRecorder);

    /** The same figures from the graphs, counted whether or not the API is called. */
    private final TokenCounter graphTokens = new TokenCounter();
    private final TokenCounter graphTokensAtLastTick = new TokenCounter();
    private final IntervalRecorder graphTtftRecorder = new IntervalRecorder(SIGNIFICANT_DIGITS);
    private final IntervalRecorder graphTpotRecorder = new IntervalRecorder(SIGNIFICANT_DIGITS);
    private long graphsWithPositions;
    /** The requests the graphs tell apart (one sequence at a time), for a run whose source is the graphs. */
    private final GraphRequests graphRequests = new GraphRequests(SIGNIFICANT_DIGITS);
    private GraphTokenCounts graphCountsAtLastTick = GraphTokenCounts.EMPTY;

    private SpeculativeTotals lastSpeculative = SpeculativeTotals.EMPTY;
    /** The batch record just read, for the decode record of the same call that follows it. */
    private int batchTid = -1;
    private long batchStartNs;
    private boolean batchFits;
    /**
     * The graph the API call that returns next computed: a graph returns inside the call on the same thread, so
     * its record comes first. Its first position tells a one-token call that starts a sequence (position 0).
     */
    private int graphTid = -1;
    private long graphStartNs;
    private int graphFirstPosition = -1;
    /**
     * The tokens of the graphs computed on {@link #graphTid} since its last call returned, and the first one's
     * start: the size of a call whose batch was filled before the attach (its builders not seen, its size unknown
     * to the probe), from the ubatches llama.cpp split it into.
     */
    private long graphCallTokens;
    private long graphCallStartNs;
    private final long[] contexts = new long[MAX_CONTEXTS];
    private int contextCount;

    private CpuGraphAssembler graphs;
    /** The layers told of each decode call (the roofline, the DAG, the offload layer): registered aggregators. */
    private final java.util.List<DecodeListener> decodeListeners = new java.util.ArrayList<>();
    private FlightRecorder flight;
    private IntervalHistograms histograms;
    private int decodeLabel;
    private int prefillLabel;

    // The tick's figures, taken at tickAt and read by addInterval / addTotal.
    private long lastTickNs = Long.MIN_VALUE;
    private int activeAtTick;
    private List<SequenceStatus> recentAtTick = List.of();

    @Override
    public Layer layer() {
        return Layer.TOKEN;
    }

    @Override
    public TraceListener records(int kind) {
        return switch (kind) {
            case EventLayout.EVENT_DECODE, EventLayout.EVENT_ENCODE, EventLayout.EVENT_BATCH,
                 EventLayout.EVENT_SEQ_RM, EventLayout.EVENT_GRAPH_TOKENS -> this;
            default -> null;
        };
    }

    @Override
    public void followGraphs(CpuGraphAssembler assembler) {
        this.graphs = assembler;
    }

    /** Tells {@code listener} of every decode call from now on (TraceAggregator.register). */
    @Override
    public void decodesTo(DecodeListener listener) {
        decodeListeners.add(listener);
    }

    /** The per-sequence accounting of batches (tests read what the last batch held). */
    SequenceTracker sequences() {
        return sequences;
    }

    @Override
    public void keepForSnapshots(FlightRecorder flightRecorder, IntervalHistograms intervalHistograms) {
        this.flight = flightRecorder;
        this.histograms = intervalHistograms;
        if (flight != null) {
            decodeLabel = flight.label("decode");
            prefillLabel = flight.label("prefill");
        }
    }

    /** The run's TTFT and TPOT histograms (ns) of the run's source, tagged ttft and tpot. */
    @Override
    public void forEachRunHistogram(java.util.function.BiConsumer<String, Histogram> reader) {
        boolean api = source() != TokenSource.GRAPHS;
        reader.accept(HistogramTag.TTFT, (api ? ttftRecorder : graphTtftRecorder).totalHistogram());
        reader.accept(HistogramTag.TPOT, (api ? tpotRecorder : graphTpotRecorder).totalHistogram());
    }

    /** The run's source: the API once it was called, else the graphs once one had tokens. */
    TokenSource source() {
        if (tokens.calls > 0 || tokens.encodeCalls > 0) {
            return TokenSource.API;
        }
        return graphTokens.calls > 0 || graphTokens.encodeCalls > 0 ? TokenSource.GRAPHS : TokenSource.NONE;
    }

    @Override
    public void onBatch(int tid, long startNs, long endNs, long contextAddress, int nTokens, BatchTokens batch) {
        batchTid = tid;
        batchStartNs = startNs;
        batchFits = sequences.onBatch(tid, startNs, endNs, contextAddress, nTokens, batch);
        addKeptDrafts();
        if (!batchFits) {
            tokens.batchesUnread++;
        }
    }

    @Override
    public void onSequenceRemove(int tid, long timeNs, long memoryAddress, int seq, int p0, int p1) {
        sequences.onSequenceRemove(seq, p0, p1);
        addKeptDrafts();
    }

    /** Drafts a verification kept, told after its call: generated tokens of no call of their own. */
    private void addKeptDrafts() {
        tokens.tokensDecode += sequences.takeKeptDrafts();
    }

    @Override
    public void onDecode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {
        long durationNs = Math.max(0, endNs - startNs);
        noteContext(contextAddress);
        boolean perSequence = batchFits && batchTid == tid && batchStartNs == startNs;
        batchTid = -1;
        // The graph this call computed, when one was read on this thread within it.
        boolean graphInCall = graphTid == tid && graphStartNs >= startNs && graphStartNs <= endNs;
        int firstPosition = graphInCall ? graphFirstPosition : -1;
        if (nTokens < 0 && graphInCall && graphCallStartNs >= startNs) {
            nTokens = (int) Math.min(Integer.MAX_VALUE, graphCallTokens); // its batch was filled before the attach
        }
        graphTid = -1;
        if (perSequence && sequences.draftBatch) {
            // A draft model's call: counted with the speculative figures, not as the engine's tokens.
        } else if (perSequence) {
            // The batch said which tokens were prompt and which generated; TTFT and TPOT came per request.
            tokens.record(sequences.promptTokens, sequences.generatedTokens, sequences.firstOutputs, durationNs,
                    status);
            if (status == 0) {
                for (DecodeListener listener : decodeListeners) {
                    listener.onPositionedTokens(sequences.positionedTokens, sequences.positionedContextPositions);
                    if (graphs != null && sequences.decodeStep) {
                        listener.onDecodeStep(graphs.latestSeq(), sequences.generatedTokens,
                                sequences.stepContextPositions);
                    }
                }
            }
        } else {
            int generated = generatedOf(nTokens, -1, firstPosition);
            tokens.record(Math.max(0, nTokens) - generated, generated, 0, durationNs, status);
            if (graphs != null && status == 0 && generated == 1 && nTokens == 1) {
                for (DecodeListener listener : decodeListeners) {
                    listener.onDecodeStep(graphs.latestSeq(), 1, -1); // positions not read: weights and FLOPs only
                }
            }
            if (generated > 0) {
                tpotRecorder.recordValue(durationNs);
            } else if (nTokens > 0) {
                ttftRecorder.recordValue(durationNs);
            }
        }
        if (flight != null) {
            flight.record(FlightRecorder.Kind.TOKEN, tid, startNs, endNs, nTokens == 1 ? decodeLabel : prefillLabel,
                    status, nTokens);
        }
        long latestGraphSeq = graphs == null ? 0 : graphs.latestSeq();
        for (DecodeListener listener : decodeListeners) {
            listener.onDecodeCall(tid, nTokens, latestGraphSeq);
        }
    }

    /**
     * The generated tokens of a batch of {@code tokens} that no per-token sequence says more of: one token is
     * generated unless it is at position 0 (a sequence's start: its input is a prompt); several tokens are a prompt
     * chunk, but for the outputs past the first when {@code outputs} is known (several sequences' steps).
     */
    static int generatedOf(int tokens, int outputs, int firstPosition) {
        if (tokens == 1) {
            return firstPosition == 0 ? 0 : 1;
        }
        if (tokens > 1 && outputs > 1) {
            return outputs == tokens ? tokens : Math.min(tokens, outputs - 1);
        }
        return 0;
    }

    /**
     * An encoder pass is counted apart: no TTFT or TPOT sample, no flight-recorder token span, nothing for the
     * DAG, so every decode figure stays the decoder's. Its context is one the target uses, so it is noted.
     */
    @Override
    public void onEncode(int tid, long startNs, long endNs, long contextAddress, int nTokens, int status) {
        noteContext(contextAddress);
        tokens.recordEncode(nTokens);
    }

    @Override
    public void onGraphTokens(GraphTokensRecord graph) {
        if (graph.encoder() && graph.tokens() < 0) {
            graphTokens.recordEncode(-1);
            return;
        }
        if (graph.tokens() < 0) {
            return;
        }
        int firstPosition = graph.positionsRead() ? graph.firstPosition() : -1;
        if (graphTid != graph.tid()) {
            graphCallTokens = 0;
            graphCallStartNs = graph.startNs();
        }
        graphCallTokens += graph.tokens();
        graphTid = graph.tid();
        graphStartNs = graph.startNs();
        graphFirstPosition = firstPosition;
        if (graph.positionsRead()) {
            graphsWithPositions++;
        }
        int generated = generatedOf(graph.tokens(), graph.outputs(), firstPosition);
        long durationNs = graph.durationNs();
        graphTokens.record(graph.tokens() - generated, generated, 0, durationNs, graph.status());
        graphRequests.onGraph(graph.tokens() - generated, generated, firstPosition, graph.startNs(), graph.endNs());
        if (generated > 0) {
            graphTpotRecorder.recordValue(durationNs);
        } else if (graph.tokens() > 0) {
            graphTtftRecorder.recordValue(durationNs);
        }
    }

    private void noteContext(long address) {
        for (int i = 0; i < contextCount; i++) {
            if (contexts[i] == address) {
                return;
            }
        }
        if (contextCount < MAX_CONTEXTS) {
            contexts[contextCount++] = address;
        }
    }

    /** This layer's bound in the snapshot's limits: the contexts followed. */
    @Override
    public java.util.List<Limits.Bound> bounds() {
        return java.util.List.of(sequences.bound());
    }

    /**
     * Closes the interval at {@code nowNs}: the recorders swap, the interval's histograms are logged (the caller
     * began the interval in {@code histograms}), the requests panel's rows are taken.
     */
    @Override
    public void closeInterval(long nowNs) {
        long since = lastTickNs == Long.MIN_VALUE ? nowNs : lastTickNs;
        activeAtTick = sequences.activeSince(since);
        recentAtTick = sequences.statuses(nowNs, RECENT_NS);
        lastTickNs = nowNs;
        ttftRecorder.closeInterval();
        tpotRecorder.closeInterval();
        graphTtftRecorder.closeInterval();
        graphTpotRecorder.closeInterval();
        graphRequests.closeInterval();
        if (histograms != null) {
            boolean api = source() != TokenSource.GRAPHS;
            (api ? ttftRecorder : graphTtftRecorder).logInterval(histograms, HistogramTag.TTFT);
            (api ? tpotRecorder : graphTpotRecorder).logInterval(histograms, HistogramTag.TPOT);
        }
    }

    /** Marks where the first interval starts. */
    @Override
    public void start(long nowNs) {
        lastTickNs = nowNs;
    }

    private GraphTokenCounts graphCounts() {
        return new GraphTokenCounts(graphTokens.calls, graphTokens.tokensPrefill, graphTokens.tokensDecode,
                graphsWithPositions, graphTokens.encodeCalls, graphRequests.known() ? graphRequests.requests() : -1,
                graphRequests.totalTtft(), graphRequests.totalTpot());
    }

    @Override
    public Figures addInterval(Figures figures) {
        SpeculativeTotals speculative = sequences.speculativeTotals();
        SpeculativeTotals intervalSpeculative = speculative.since(lastSpeculative);
        lastSpeculative = speculative;
        GraphTokenCounts counts = graphCounts();
        GraphTokenCounts intervalCounts = counts.since(graphCountsAtLastTick, graphRequests.intervalTtft(),
                graphRequests.intervalTpot());
        graphCountsAtLastTick = counts;
        TokenSource source = source();
        Figures out;
        if (source == TokenSource.GRAPHS) {
            out = withTokenFigures(figures, graphTokens.freezeSince(graphTokensAtLastTick, 0, 0, List.of(),
                            SpeculativeTotals.EMPTY).withSource(source, intervalCounts),
                    graphTtftRecorder.intervalSummary(), graphTpotRecorder.intervalSummary());
        } else {
            out = withTokenFigures(figures, tokens.freezeSince(tokensAtLastTick, contextCount, activeAtTick,
                            recentAtTick, intervalSpeculative).withSource(source, intervalCounts),
                    ttftRecorder.intervalSummary(), tpotRecorder.intervalSummary());
        }
        tokensAtLastTick.copyFrom(tokens);
        graphTokensAtLastTick.copyFrom(graphTokens);
        return out;
    }

    @Override
    public Figures addTotal(Figures figures) {
        TokenSource source = source();
        if (source == TokenSource.GRAPHS) {
            return withTokenFigures(figures, graphTokens.freezeSince(TokenCounter.ZERO, 0, 0, List.of(),
                            SpeculativeTotals.EMPTY).withSource(source, graphCounts()),
                    graphTtftRecorder.totalSummary(), graphTpotRecorder.totalSummary());
        }
        return withTokenFigures(figures, tokens.freezeSince(TokenCounter.ZERO, contextCount, activeAtTick,
                        recentAtTick, sequences.speculativeTotals()).withSource(source, graphCounts()),
                ttftRecorder.totalSummary(), tpotRecorder.totalSummary());
    }

    private static Figures withTokenFigures(Figures f, TokenTotals tokenTotals, LatencySummary ttft,
                                            LatencySummary tpot) {
        return new Figures(f.spanNs(), tokenTotals, ttft, tpot, f.backends(), f.cpuGraphs(), f.operators(), f.sched(),
                f.counters(), f.backendOps(), f.roofline(), f.offload(), f.whisper());
    }
}
