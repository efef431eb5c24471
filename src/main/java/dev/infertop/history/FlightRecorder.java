package dev.infertop.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The last seconds of what happened, slice by slice, for a snapshot's timeline: a ring of primitives (no
 * allocation per record, a fixed memory bound whatever the rate), written by the collector thread only. Records
 * are typed ({@link Kind}); layers that come later (thread states, counters, expert activations) record their own
 * kinds and the trace writer draws each kind as its own track type.
 *
 * <p>Two bounds: {@code capacity} records (the oldest is dropped) and, at copy time, a window of {@code windowNs}
 * back from the copy's time. A mid-sized model traced whole makes tens of thousands of op slices a second: the
 * default 512 Ki records (37 B each, 18.5 MiB) hold a few seconds of it (measurements.md). The ring is held in chunks of
 * {@link #CHUNK_RECORDS}, allocated as records come and reused once every record in them ended before the window:
 * it takes the memory the window needs (a sampled operator layer, a small model or an idle server need a few
 * chunks, not 18.5 MiB), and the capacity only where the rate outruns it.
 */
public final class FlightRecorder {
    public static final int DEFAULT_CAPACITY = 1 << 19;

    /** What a record is; the trace writer has one drawing per kind. */
    public enum Kind {
        /** A llama_decode call on its thread; {@code value} = n_tokens. */
        TOKEN,
        /** A graph compute (per backend, or the CPU graph); label = backend. */
        GRAPH,
        /**
         * A thread's work on one op group; label = op, detail = tensor name id, end = its barrier arrival,
         * value = the group's estimated FLOPs (-1 unknown).
         */
        OP,
        /** A thread's barrier wait after an op group; label = op. */
        WAIT,
        /**
         * A scheduler state of a thread over [start, end] (sched layer); label = state; for a wait for a CPU,
         * detail = the label of the task that ran there longest meanwhile (its comm, -1 unknown) and value =
         * its pid in the high 32 bits, the time it ran (ns, at most 2^32 - 1) in the low 32 bits.
         */
        THREAD_STATE,
        /** A counter sample at start; label = counter track, value = Double.doubleToRawLongBits(value). */
        COUNTER,
        /**
         * A point event at start (e.g. an expert activation); label = name, value = argument; one written with
         * {@link #recordWithPayload} carries its longs in the slice's {@code payload} (detail = their count).
         */
        INSTANT
    }

    private static final Kind[] KINDS = Kind.values();

    /** Records per chunk (~600 KB): the unit the ring grows and is reused by. */
    public static final int CHUNK_RECORDS = 1 << 14;

    /** One chunk of consecutive records, numbered from a multiple of the chunk size. */
    private static final class Chunk {
        final byte[] kinds;
        final int[] tids;
        final long[] startNs;
        final long[] endNs;
        final int[] labels;
        final int[] details;
        final long[] values;
        final boolean[] payloadRecord;
        /** The latest end of a record in it: when that is before the window, the whole chunk is. */
        long maxEndNs = Long.MIN_VALUE;

        Chunk(int records) {
            kinds = new byte[records];
            tids = new int[records];
            startNs = new long[records];
            endNs = new long[records];
            labels = new int[records];
            details = new int[records];
            values = new long[records];
            payloadRecord = new boolean[records];
        }
    }

    private final int capacity;
    private final long windowNs;
    private final int chunkRecords;
    /** Chunk number c lives in slot c % slots.length, for c from oldestChunk to the chunk of the last record. */
    private final Chunk[] slots;
    private long oldestChunk;
    private long written;
    /** The chunk being filled and the next record's place in it (no division per record). */
    private Chunk current;
    private int at;
    /**
     * The latest end among the records of chunks reused while full (all their records had been dropped for the
     * capacity); the oldest chunk's dropped records are looked at when a window is copied.
     */
    private long droppedEndNs = Long.MIN_VALUE;
    // A second ring for records that carry more than one value (an expert activation's per-expert counts):
    // allocated on the first such record, so runs without them pay nothing; positions count from the start.
    private final int payloadCapacity;
    private long[] payload;
    private long payloadWritten;

    private final List<String> labelNames = new ArrayList<>();
    private final Map<String, Integer> labelIds = new HashMap<>();

    public FlightRecorder(int capacity, long windowNs) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
        this.windowNs = windowNs;
        chunkRecords = Math.min(CHUNK_RECORDS, capacity);
        // One chunk more than the capacity needs: records are dropped one by one, chunks only when all are.
        slots = new Chunk[(capacity + chunkRecords - 1) / chunkRecords + 1];
        payloadCapacity = Math.max(1024, capacity / 2);
    }

    public long windowNs() {
        return windowNs;
    }

    /** The id of a label, allocated once per distinct string; call off the per-event path (e.g. per graph plan). */
    public int label(String name) {
        Integer id = labelIds.get(name);
        if (id == null) {
            id = labelNames.size();
            labelNames.add(name);
            labelIds.put(name, id);
        }
        return id;
    }

    /** Appends one record, dropping the oldest past the capacity. Allocation-free but for a new chunk. */
    public void record(Kind kind, int tid, long fromNs, long toNs, int label, int detail, long value) {
        if (at == chunkRecords || current == null) {
            current = startChunk(written / chunkRecords, fromNs);
            at = 0;
        }
        Chunk chunk = current;
        int i = at++;
        chunk.kinds[i] = (byte) kind.ordinal();
        chunk.tids[i] = tid;
        chunk.startNs[i] = fromNs;
        chunk.endNs[i] = toNs;
        chunk.labels[i] = label;
        chunk.details[i] = detail;
        chunk.values[i] = value;
        chunk.payloadRecord[i] = false;
        if (toNs > chunk.maxEndNs) {
            chunk.maxEndNs = toNs;
        }
        written++;
    }

    private int slot(long chunkNumber) {
        return (int) (chunkNumber % slots.length);
    }

    /**
     * The chunk for chunk number {@code number}, whose first record starts at {@code nowNs}: the slot's own when the
     * ring is full (its records were all dropped for the capacity), else the oldest when every record in it ended
     * before the window, else a new one.
     */
    private Chunk startChunk(long number, long nowNs) {
        if (number - oldestChunk >= slots.length) { // full: the slot holds the oldest chunk, all dropped
            oldestChunk = number - slots.length + 1;
            Chunk reused = slots[slot(number)];
            droppedEndNs = Math.max(droppedEndNs, reused.maxEndNs);
            reused.maxEndNs = Long.MIN_VALUE;
            return reused;
        }
        Chunk oldest = slots[slot(oldestChunk)];
        Chunk chunk;
        if (number > oldestChunk && oldest != null && oldest.maxEndNs < nowNs - windowNs) {
            slots[slot(oldestChunk)] = null;
            oldestChunk++;
            oldest.maxEndNs = Long.MIN_VALUE;
            chunk = oldest;
        } else {
            chunk = new Chunk(chunkRecords);
        }
        slots[slot(number)] = chunk;
        return chunk;
    }

    /** The chunk holding record {@code number}, or null when it is no longer held. */
    private Chunk chunkOf(long number) {
        return number < firstHeld() || number >= written ? null : slots[slot(number / chunkRecords)];
    }

    /** The number of the oldest record held. */
    private long firstHeld() {
        return Math.max(oldestChunk * chunkRecords, written - capacity);
    }

    /**
     * Rewrites the detail and value of record number {@code recordNumber} (as {@link #recordsWritten()} was
     * before it was written), e.g. when a later record names its cause. False when it was overwritten already.
     */
    public boolean amend(long recordNumber, int detail, long value) {
        Chunk chunk = recordNumber < 0 ? null : chunkOf(recordNumber);
        if (chunk == null) {
            return false;
        }
        int i = (int) (recordNumber % chunkRecords);
        chunk.details[i] = detail;
        chunk.values[i] = value;
        return true;
    }

    /**
     * Appends one record carrying {@code count} longs of {@code from} (copied: the caller may reuse its array).
     * The record's detail is the count and its value the payload's position; when the payload ring overwrote it
     * before a copy, the copy leaves the record out. Allocation-free after the first call.
     */
    public void recordWithPayload(Kind kind, int tid, long fromNs, long toNs, int label, long[] from, int count) {
        if (count < 0 || count > payloadCapacity) {
            throw new IllegalArgumentException("payload of " + count + " longs");
        }
        if (payload == null) {
            payload = new long[payloadCapacity];
        }
        long position = payloadWritten;
        for (int k = 0; k < count; k++) {
            payload[(int) ((position + k) % payloadCapacity)] = from[k];
        }
        payloadWritten += count;
        record(kind, tid, fromNs, toNs, label, count, position);
        current.payloadRecord[at - 1] = true;
    }

    public void counter(int label, long atNs, double value) {
        record(Kind.COUNTER, 0, atNs, atNs, label, -1, Double.doubleToRawLongBits(value));
    }

    public long recordsWritten() {
        return written;
    }

    /**
     * The records that ended within the window back from {@code nowNs}, oldest first, with the labels they name;
     * a copy the writer thread may keep. Collector thread only.
     */
    public Window copyWindow(long nowNs) {
        long from = nowNs - windowNs;
        List<Slice> slices = new ArrayList<>();
        for (long n = firstHeld(); n < written; n++) {
            Chunk chunk = slots[slot(n / chunkRecords)];
            int i = (int) (n % chunkRecords);
            if (chunk.endNs[i] < from) {
                continue;
            }
            long[] carried = NO_PAYLOAD;
            if (chunk.payloadRecord[i]) {
                if (payloadWritten - chunk.values[i] > payloadCapacity) {
                    continue; // its payload was overwritten: the window holds the record without what it says
                }
                carried = new long[chunk.details[i]];
                for (int k = 0; k < carried.length; k++) {
                    carried[k] = payload[(int) ((chunk.values[i] + k) % payloadCapacity)];
                }
            }
            slices.add(new Slice(KINDS[chunk.kinds[i]], chunk.tids[i], chunk.startNs[i], chunk.endNs[i],
                    chunk.labels[i], chunk.details[i], chunk.values[i], carried));
        }
        // Truncated: a record dropped for the capacity ended within the window (those of the oldest chunk that
        // are dropped are still in it; those of chunks reused since, in droppedEndNs).
        long droppedEnd = droppedEndNs;
        for (long n = oldestChunk * chunkRecords; n < firstHeld(); n++) {
            droppedEnd = Math.max(droppedEnd, slots[slot(n / chunkRecords)].endNs[(int) (n % chunkRecords)]);
        }
        boolean truncated = droppedEnd >= from;
        return new Window(nowNs, windowNs, List.copyOf(labelNames), slices, truncated);
    }

    /** Chunks allocated now (each {@link #CHUNK_RECORDS} records, fewer for a smaller capacity). */
    public int chunksHeld() {
        int held = 0;
        for (Chunk chunk : slots) {
            held += chunk == null ? 0 : 1;
        }
        return held;
    }

    private static final long[] NO_PAYLOAD = new long[0];

    /** One record, as copied out; {@code payload} holds what {@link #recordWithPayload} attached (else empty). */
    public record Slice(Kind kind, int tid, long startNs, long endNs, int label, int detail, long value,
                        long[] payload) {
        public Slice(Kind kind, int tid, long startNs, long endNs, int label, int detail, long value) {
            this(kind, tid, startNs, endNs, label, detail, value, NO_PAYLOAD);
        }

        public long durationNs() {
            return Math.max(0, endNs - startNs);
        }

        public double counterValue() {
            return Double.longBitsToDouble(value);
        }
    }

    /**
     * The copied window: {@code truncated} when the ring was full before the window's start (the rate outran
     * the capacity, the timeline covers less than the window).
     */
    public record Window(long nowNs, long windowNs, List<String> labels, List<Slice> slices, boolean truncated) {
        public Window {
            labels = List.copyOf(labels);
            slices = List.copyOf(slices);
        }

        public static Window empty(long nowNs, long windowNs) {
            return new Window(nowNs, windowNs, List.of(), List.of(), false);
        }

        public String label(int id) {
            return id >= 0 && id < labels.size() ? labels.get(id) : "?";
        }
    }
}
