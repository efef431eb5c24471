package dev.infertop.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The last seconds of what happened, slice by slice, for a snapshot's timeline: a preallocated ring of
 * primitives (no allocation per record, a fixed memory bound whatever the rate), written by the collector
 * thread only. Records are typed ({@link Kind}); layers that come later (thread states, counters, expert
 * activations) record their own kinds and the trace writer draws each kind as its own track type.
 *
 * <p>Two bounds: {@code capacity} records (the oldest is overwritten) and, at copy time, a window of
 * {@code windowNs} back from the copy's time. A 245 M model on 2 threads makes ~1250 op slices per token, ~90 k
 * per second: the default 512 Ki records (37 B each, 18.5 MiB) hold ~5 s of it; a 3 M model's decode fewer.
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

    private final int capacity;
    private final long windowNs;
    private final byte[] kinds;
    private final int[] tids;
    private final long[] startNs;
    private final long[] endNs;
    private final int[] labels;
    private final int[] details;
    private final long[] values;
    private final boolean[] payloadRecord;
    private long written;
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
        kinds = new byte[capacity];
        tids = new int[capacity];
        startNs = new long[capacity];
        endNs = new long[capacity];
        labels = new int[capacity];
        details = new int[capacity];
        payloadRecord = new boolean[capacity];
        values = new long[capacity];
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

    /** Appends one record, overwriting the oldest when full. Allocation-free. */
    public void record(Kind kind, int tid, long fromNs, long toNs, int label, int detail, long value) {
        int i = (int) (written % capacity);
        kinds[i] = (byte) kind.ordinal();
        tids[i] = tid;
        startNs[i] = fromNs;
        endNs[i] = toNs;
        labels[i] = label;
        details[i] = detail;
        values[i] = value;
        payloadRecord[i] = false;
        written++;
    }

    /**
     * Rewrites the detail and value of record number {@code recordNumber} (as {@link #recordsWritten()} was
     * before it was written), e.g. when a later record names its cause. False when it was overwritten already.
     */
    public boolean amend(long recordNumber, int detail, long value) {
        if (recordNumber < 0 || recordNumber >= written || written - recordNumber > capacity) {
            return false;
        }
        int i = (int) (recordNumber % capacity);
        details[i] = detail;
        values[i] = value;
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
        payloadRecord[(int) ((written - 1) % capacity)] = true;
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
        long held = Math.min(written, capacity);
        long from = nowNs - windowNs;
        List<Slice> slices = new ArrayList<>();
        for (long n = written - held; n < written; n++) {
            int i = (int) (n % capacity);
            if (endNs[i] < from) {
                continue;
            }
            long[] carried = NO_PAYLOAD;
            if (payloadRecord[i]) {
                if (payloadWritten - values[i] > payloadCapacity) {
                    continue; // its payload was overwritten: the window holds the record without what it says
                }
                carried = new long[details[i]];
                for (int k = 0; k < carried.length; k++) {
                    carried[k] = payload[(int) ((values[i] + k) % payloadCapacity)];
                }
            }
            slices.add(new Slice(KINDS[kinds[i]], tids[i], startNs[i], endNs[i], labels[i], details[i], values[i],
                    carried));
        }
        boolean truncated = written > capacity && !slices.isEmpty()
                && slices.getFirst().startNs() > from;
        return new Window(nowNs, windowNs, List.copyOf(labelNames), slices, truncated);
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
