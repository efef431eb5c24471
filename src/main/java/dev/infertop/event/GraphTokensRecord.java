package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.infertop.event.EventLayout.*;

/**
 * One struct graph_tokens_event, decoded: what a graph said of its tokens (the token layer's graph source). One
 * instance per decoder, refilled for each record, so a record costs no allocation; a listener reads it during the
 * call only and copies what it keeps. Figures the probe could not read are -1.
 */
public final class GraphTokensRecord {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private int tid;
    private long startNs;
    private long endNs;
    private long cgraph;
    private int tokens;
    private int outputs;
    private int positions;
    private int firstPosition;
    private int lastPosition;
    private int kvLength;
    private int runtime;
    private int level;
    private int flags;
    private int status;

    /** Reads the record at {@code offset}; false (and nothing changed) when it is shorter than the layout. */
    boolean read(MemorySegment data, long offset, int lengthBytes, int tid, long startNs, long endNs) {
        if (lengthBytes < GRAPH_TOKENS_SIZE) {
            return false;
        }
        this.tid = tid;
        this.startNs = startNs;
        this.endNs = endNs;
        cgraph = data.get(LONG, offset + GRAPH_TOKENS_CGRAPH);
        tokens = data.get(INT, offset + GRAPH_TOKENS_N_TOKENS);
        outputs = data.get(INT, offset + GRAPH_TOKENS_N_OUTPUTS);
        positions = data.get(INT, offset + GRAPH_TOKENS_N_POSITIONS);
        firstPosition = data.get(INT, offset + GRAPH_TOKENS_POS_FIRST);
        lastPosition = data.get(INT, offset + GRAPH_TOKENS_POS_LAST);
        kvLength = data.get(INT, offset + GRAPH_TOKENS_KV_LEN);
        runtime = data.get(INT, offset + GRAPH_TOKENS_RUNTIME);
        level = data.get(INT, offset + GRAPH_TOKENS_LEVEL);
        flags = data.get(INT, offset + GRAPH_TOKENS_FLAGS);
        status = data.get(INT, offset + GRAPH_TOKENS_RET);
        return true;
    }

    /** Fills the view directly (tests, replays): the values a record would carry. */
    public GraphTokensRecord set(int tid, long startNs, long endNs, long cgraph, int tokens, int outputs,
                                 int positions, int firstPosition, int lastPosition, int kvLength, int runtime,
                                 int level, int flags, int status) {
        this.tid = tid;
        this.startNs = startNs;
        this.endNs = endNs;
        this.cgraph = cgraph;
        this.tokens = tokens;
        this.outputs = outputs;
        this.positions = positions;
        this.firstPosition = firstPosition;
        this.lastPosition = lastPosition;
        this.kvLength = kvLength;
        this.runtime = runtime;
        this.level = level;
        this.flags = flags;
        this.status = status;
        return this;
    }

    public int tid() {
        return tid;
    }

    /** When the graph call began and returned (CLOCK_MONOTONIC ns). */
    public long startNs() {
        return startNs;
    }

    public long endNs() {
        return endNs;
    }

    public long durationNs() {
        return Math.max(0, endNs - startNs);
    }

    /** struct ggml_cgraph * of the graph: a runtime that keeps one graph per context keeps its address. */
    public long cgraph() {
        return cgraph;
    }

    /** The batch's tokens (rows the token-embedding GET_ROWS reads), -1 when the graph has none (an encoder pass). */
    public int tokens() {
        return tokens;
    }

    /** Outputs (logits rows) computed, -1 when the last node is not the description's output. */
    public int outputs() {
        return outputs;
    }

    /** The positions input's length, -1 when none was found. */
    public int positions() {
        return positions;
    }

    /** Whether the first and last positions were read from the positions input's data (host memory). */
    public boolean positionsRead() {
        return (flags & GRAPH_TOKENS_POSITIONS) != 0;
    }

    /** positions[0], when {@link #positionsRead}. */
    public int firstPosition() {
        return firstPosition;
    }

    /** positions[tokens - 1], when {@link #positionsRead}. */
    public int lastPosition() {
        return lastPosition;
    }

    /** The mask's ne[0] (KV cells attended), -1 when no mask was found. */
    public int kvLength() {
        return kvLength;
    }

    /** The description (1-based, config/runtimes.conf's order) whose names matched. */
    public int runtime() {
        return runtime;
    }

    /** EventLayout.GRAPH_LEVEL_*: the call the graph was read at. */
    public int level() {
        return level;
    }

    /** An encoder input was found: an encoder pass, not a decode. */
    public boolean encoder() {
        return (flags & GRAPH_TOKENS_ENCODER) != 0;
    }

    /** The graph had more nodes than were looked at, and not everything was found. */
    public boolean truncated() {
        return (flags & GRAPH_TOKENS_TRUNCATED) != 0;
    }

    /** The graph call's return value (enum ggml_status, 0: success). */
    public int status() {
        return status;
    }
}
