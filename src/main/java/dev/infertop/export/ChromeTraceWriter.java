package dev.infertop.export;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infertop.history.FlightRecorder.Slice;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.MoeTimeline;
import dev.infertop.history.SchedTimeline;
import dev.infertop.json.SafeJson;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The flight recorder's window as a Chrome Trace Event JSON file (trace.json), which Perfetto and
 * chrome://tracing open. One process (the target), one track per thread; per record kind:
 * <ul>
 *   <li>TOKEN, GRAPH, OP, WAIT: complete events ({@code "ph":"X"}) on their thread, categories
 *       token, graph, op, wait; an op slice's args name its tensor and its estimated FLOPs
 *       ({@code flops_est}, when known);</li>
 *   <li>THREAD_STATE: complete events of category sched (running, off-CPU (runnable), off-CPU (sleeping)) on
 *       the thread's own states track ("NAME TID states", tid {@link #STATES_TID_OFFSET} + TID: its slices
 *       overlap the op slices without nesting in them); a wait for a CPU names in args the task that ran there
 *       longest meanwhile ({@code interferer}, {@code interferer_pid}, {@code interferer_ms});</li>
 *   <li>COUNTER: counter events ({@code "ph":"C"}), one track per label (e.g. L3 bandwidth);</li>
 *   <li>INSTANT: thread-scoped instant events ({@code "ph":"i"}); an MoE ids read is one of category moe
 *       named "moe experts" on the thread that copied the ids ({@link MoeTraceEvents} lists its args);</li>
 *   <li>a "tokens/s" counter track derived from the token slices, in 100 ms bins.</li>
 * </ul>
 * Timestamps are microseconds from the window's first record ({@code otherData.origin_monotonic_ns} holds that
 * point on CLOCK_MONOTONIC).
 */
public final class ChromeTraceWriter {
    static final long TOKEN_RATE_BIN_NS = 100_000_000L;
    /** Added to a thread's tid for its states track (Linux tids stay below 2^22). */
    public static final int STATES_TID_OFFSET = 1 << 30;

    private ChromeTraceWriter() {}

    public static void write(OutputStream out, FlightRecorder.Window window, Map<Integer, String> tensorNames,
                             int pid, String processName) throws IOException {
        write(out, window, tensorNames, pid, processName, Map.of());
    }

    /** With each thread named by {@code threadNames} (its comm) where known, else "thread TID". */
    public static void write(OutputStream out, FlightRecorder.Window window, Map<Integer, String> tensorNames,
                             int pid, String processName, Map<Integer, String> threadNames) throws IOException {
        long origin = Long.MAX_VALUE;
        TreeSet<Integer> tids = new TreeSet<>();
        TreeSet<Integer> stateTids = new TreeSet<>();
        for (Slice slice : window.slices()) {
            origin = Math.min(origin, slice.startNs());
            if (slice.kind() == FlightRecorder.Kind.THREAD_STATE) {
                stateTids.add(slice.tid());
            } else if (slice.kind() != FlightRecorder.Kind.COUNTER) {
                tids.add(slice.tid());
            }
        }
        if (origin == Long.MAX_VALUE) {
            origin = window.nowNs() - window.windowNs();
        }
        try (JsonGenerator json = SafeJson.factory().createGenerator(out)) {
            json.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            json.writeStartObject();
            json.writeStringField("displayTimeUnit", "ms");
            json.writeObjectFieldStart("otherData");
            json.writeStringField("producer", "infertop");
            json.writeNumberField("origin_monotonic_ns", origin);
            json.writeNumberField("window_s", window.windowNs() / 1e9);
            json.writeBooleanField("window_truncated", window.truncated());
            json.writeEndObject();
            json.writeArrayFieldStart("traceEvents");
            metadata(json, "process_name", pid, pid, processName);
            for (int tid : tids) {
                String comm = threadNames.get(tid);
                metadata(json, "thread_name", pid, tid, comm == null ? "thread " + tid : comm + " " + tid);
            }
            for (int tid : stateTids) {
                String comm = threadNames.get(tid);
                metadata(json, "thread_name", pid, STATES_TID_OFFSET + tid,
                        (comm == null ? "thread " + tid : comm + " " + tid) + " states");
            }
            for (Slice slice : window.slices()) {
                switch (slice.kind()) {
                    case TOKEN -> complete(json, pid, slice, origin, window.label(slice.label()) + " n=" + slice.value(),
                            "token", "n_tokens", Long.toString(slice.value()));
                    case GRAPH -> complete(json, pid, slice, origin, window.label(slice.label()), "graph", "nodes",
                            Long.toString(slice.value()));
                    case OP -> {
                        complete(json, pid, slice, origin, window.label(slice.label()), "op", "tensor",
                                tensorNames.getOrDefault(slice.detail(), "?"), slice.value());
                    }
                    case WAIT -> complete(json, pid, slice, origin, "barrier wait", "wait", "after",
                            window.label(slice.label()));
                    case THREAD_STATE -> threadState(json, pid, slice, origin, window);
                    case COUNTER -> counter(json, pid, window.label(slice.label()), micros(slice.startNs(), origin),
                            slice.counterValue());
                    case INSTANT -> {
                        MoeTimeline.Activation activation = MoeTimeline.read(window, slice);
                        if (activation != null) {
                            MoeTraceEvents.activation(json, pid, slice, micros(slice.startNs(), origin), activation);
                            continue;
                        }
                        json.writeStartObject();
                        json.writeStringField("name", window.label(slice.label()));
                        json.writeStringField("cat", "instant");
                        json.writeStringField("ph", "i");
                        json.writeStringField("s", "t");
                        json.writeNumberField("ts", micros(slice.startNs(), origin));
                        json.writeNumberField("pid", pid);
                        json.writeNumberField("tid", slice.tid());
                        json.writeObjectFieldStart("args");
                        json.writeNumberField("value", slice.value());
                        json.writeEndObject();
                        json.writeEndObject();
                    }
                }
            }
            for (Map.Entry<Long, Long> bin : tokenBins(window, origin).entrySet()) {
                counter(json, pid, "tokens/s", micros(origin + bin.getKey() * TOKEN_RATE_BIN_NS, origin),
                        bin.getValue() * 1e9 / TOKEN_RATE_BIN_NS);
            }
            json.writeEndArray();
            json.writeEndObject();
        }
    }

    private static void threadState(JsonGenerator json, int pid, Slice slice, long origin, FlightRecorder.Window window)
            throws IOException {
        json.writeStartObject();
        json.writeStringField("name", window.label(slice.label()));
        json.writeStringField("cat", "sched");
        json.writeStringField("ph", "X");
        json.writeNumberField("ts", micros(slice.startNs(), origin));
        json.writeNumberField("dur", Math.round(slice.durationNs() / 10.0) / 100.0);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", STATES_TID_OFFSET + slice.tid());
        if (slice.detail() >= 0) {
            json.writeObjectFieldStart("args");
            json.writeStringField("interferer", window.label(slice.detail()));
            json.writeNumberField("interferer_pid", SchedTimeline.culpritPid(slice.value()));
            json.writeNumberField("interferer_ms", Math.round(SchedTimeline.culpritNs(slice.value()) / 1e3) / 1e3);
            json.writeEndObject();
        }
        json.writeEndObject();
    }

    /** Tokens finished per 100 ms bin from the origin, every bin from the first to the last (zeros included). */
    static TreeMap<Long, Long> tokenBins(FlightRecorder.Window window, long origin) {
        TreeMap<Long, Long> bins = new TreeMap<>();
        for (Slice slice : window.slices()) {
            if (slice.kind() == FlightRecorder.Kind.TOKEN && slice.value() > 0) {
                bins.merge(Math.floorDiv(slice.endNs() - origin, TOKEN_RATE_BIN_NS), slice.value(), Long::sum);
            }
        }
        if (!bins.isEmpty()) {
            for (long bin = bins.firstKey(); bin <= bins.lastKey(); bin++) {
                bins.putIfAbsent(bin, 0L);
            }
            bins.put(bins.lastKey() + 1, 0L); // the track falls back to 0 after the last token
        }
        return bins;
    }

    private static double micros(long ns, long origin) {
        return Math.round((ns - origin) / 10.0) / 100.0; // µs to 10 ns: the probes' resolution is coarser
    }

    private static void metadata(JsonGenerator json, String name, int pid, int tid, String value) throws IOException {
        json.writeStartObject();
        json.writeStringField("name", name);
        json.writeStringField("ph", "M");
        json.writeNumberField("ts", 0);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", tid);
        json.writeObjectFieldStart("args");
        json.writeStringField("name", value);
        json.writeEndObject();
        json.writeEndObject();
    }

    private static void complete(JsonGenerator json, int pid, Slice slice, long origin, String name, String category,
                                 String argName, String argValue) throws IOException {
        complete(json, pid, slice, origin, name, category, argName, argValue, -1);
    }

    /** With {@code flops} >= 0, also args.flops_est: the group's estimated FLOPs. */
    private static void complete(JsonGenerator json, int pid, Slice slice, long origin, String name, String category,
                                 String argName, String argValue, long flops) throws IOException {
        json.writeStartObject();
        json.writeStringField("name", name);
        json.writeStringField("cat", category);
        json.writeStringField("ph", "X");
        json.writeNumberField("ts", micros(slice.startNs(), origin));
        json.writeNumberField("dur", Math.round(slice.durationNs() / 10.0) / 100.0);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", slice.tid());
        if (argName != null) {
            json.writeObjectFieldStart("args");
            json.writeStringField(argName, argValue);
            if (flops >= 0) {
                json.writeNumberField("flops_est", flops);
            }
            json.writeEndObject();
        }
        json.writeEndObject();
    }

    private static void counter(JsonGenerator json, int pid, String name, double ts, double value) throws IOException {
        json.writeStartObject();
        json.writeStringField("name", name);
        json.writeStringField("ph", "C");
        json.writeNumberField("ts", ts);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", 0);
        json.writeObjectFieldStart("args");
        json.writeNumberField("value", Math.round(value * 100) / 100.0);
        json.writeEndObject();
        json.writeEndObject();
    }
}
