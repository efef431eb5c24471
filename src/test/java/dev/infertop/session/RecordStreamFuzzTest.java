package dev.infertop.session;

import dev.infertop.io.ConfigFiles;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.agg.CalibratedOpNaming;
import dev.infertop.agg.RooflineAggregator;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.metrics.MetricsFeed;
import dev.infertop.metrics.MetricsMapping;
import dev.infertop.model.BackendNames;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.SafeText;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.process.layout.CalibratedLayout;
import dev.infertop.process.layout.GraphLayout;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TensorLayout;
import dev.infertop.process.layout.TypeTable;
import dev.infertop.json.JsonLinesView;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Hostile record streams through the collector's side of the data path: ring-buffer records as a corrupted
 * ring or a layout mismatch could hand them over, with every field the target steers (its tensors' shapes,
 * names and ops, node and token counts, sequence and expert ids) at any value. They are decoded by the
 * {@link dev.infertop.event.EventDecoder} into the aggregators wired as a traced session wires them
 * ({@link Pipeline#build}: tokens, graphs, operators, sched, counters, backend ops, MoE, DAG), with a roofline
 * whose tensor headers come from the input too and the flight recorder on, and frozen into a snapshot at each
 * tick as the collector does. Every tick gives the next snapshot, its JSON line parses, its metrics build
 * (the metrics feed reports no failure); no exception escapes.
 *
 * <p>Input: frames. A frame is a 16-bit little-endian length and that many bytes of one record (cut short at
 * the input's end), each record in a segment of its own so that a read past its end throws; length
 * {@value #TICK} is a tick instead, whose next 4 bytes (little-endian, unsigned) are the µs since the last one.
 * The input's end is the target's exit: the final snapshot.
 */
class RecordStreamFuzzTest {
    static final int TICK = 0xffff;
    static final long START_NS = 1_000_000_000L;

    /** v0.5.0's ggml_tensor and a type table with block sizes: the roofline sizes what the input's tensors hold. */
    static final TensorLayout TENSOR = new TensorLayout(0, 16, 48, 80, 84, 64, 148, 152, 10, 232, 240, 248, 256, 64,
            336);
    static final TypeTable TYPES = types();
    static final CalibratedLayout LAYOUT = layout();

    private static final BackendNames BACKENDS = ConfigFiles.backendNames();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TargetInfo TARGET = new TargetInfo(4242, "llama-server", "/m/model.gguf", List.of());
    private static final List<LayerStatus> LAYERS = Arrays.stream(Layer.values())
            .map(layer -> new LayerStatus(layer, LayerStatus.State.ON, "", List.of())).toList();

    private static TypeTable types() {
        List<String> names = new ArrayList<>(List.of("f32", "f16", "q4_0", "q4_1"));
        names.add(null);
        names.add(null);
        names.addAll(List.of("q5_0", "q5_1", "q8_0", "q8_1", "i8", "i16", "i32"));
        List<TypeTable.BlockSize> sizes = new ArrayList<>(List.of(new TypeTable.BlockSize(4, 1),
                new TypeTable.BlockSize(2, 1), new TypeTable.BlockSize(18, 32), new TypeTable.BlockSize(20, 32)));
        sizes.add(null);
        sizes.add(null);
        sizes.addAll(List.of(new TypeTable.BlockSize(22, 32), new TypeTable.BlockSize(24, 32),
                new TypeTable.BlockSize(34, 32)));
        sizes.add(null); // q8_1: a type the library does not size
        sizes.addAll(List.of(new TypeTable.BlockSize(1, 1), new TypeTable.BlockSize(2, 1),
                new TypeTable.BlockSize(4, 1)));
        return new TypeTable(names, sizes);
    }

    private static CalibratedLayout layout() {
        CalibratedLayout ops = SyntheticDecodeStreamTest.layout(SyntheticDecodeStreamTest.OPS);
        return new CalibratedLayout(ops.library(), null, TENSOR, new GraphLayout(0, 4, 8, 16), ops.ops(), TYPES, 2,
                ops.computeFlag(), ops.emptyOps());
    }

    @FuzzTest(maxDuration = "10s")
    void stream(byte[] input) {
        Pipeline pipeline = Pipeline.build(LAYOUT, BACKENDS, 0, () -> 0,
                (signature, groups, ids, layers) -> true, address -> "leaf\u001b]0;" + address);
        pipeline.aggregator().register(new RooflineAggregator(new CalibratedOpNaming(LAYOUT), TYPES,
                RecordStreamFuzzTest::source, null, null));
        pipeline.aggregator().keepForSnapshots(new FlightRecorder(256, 2_000_000_000L), new IntervalHistograms(4));
        List<String> notices = new ArrayList<>();
        long[] shown = {0};
        MetricsFeed view = new MetricsFeed(snapshot -> {
            if (snapshot.sequence() != ++shown[0]) {
                throw new AssertionError("snapshot " + snapshot.sequence() + " after " + (shown[0] - 1));
            }
            jsonLine(snapshot);
        }, MetricsMapping::snapshots, pipeline.aggregator()::forEachRunHistogram, 0, notices::add);

        long nowNs = START_NS;
        pipeline.aggregator().start(nowNs);
        int at = 0;
        while (at + 2 <= input.length) {
            int length = (input[at] & 0xff) | (input[at + 1] & 0xff) << 8;
            at += 2;
            if (length == TICK) {
                long micros = 1_000_000;
                if (at + 4 <= input.length) {
                    micros = ByteBuffer.wrap(input, at, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffff_ffffL;
                    at += 4;
                }
                nowNs += micros * 1000;
                view.show(tick(pipeline, nowNs, RunState.RUNNING));
                continue;
            }
            int end = Math.min(input.length, at + length);
            byte[] record = Arrays.copyOfRange(input, at, end);
            at = end;
            long malformed = pipeline.decoder().malformedRecords();
            pipeline.decoder().onRecord(MemorySegment.ofArray(record), 0, record.length);
            if (pipeline.decoder().malformedRecords() < malformed) {
                throw new AssertionError("the malformed count went down");
            }
        }
        view.show(tick(pipeline, nowNs + 1_000_000, RunState.EXITED));
        if (!notices.isEmpty()) {
            throw new AssertionError(notices.getFirst());
        }
    }

    private static Snapshot tick(Pipeline pipeline, long nowNs, RunState state) {
        Snapshot snapshot = pipeline.aggregator().snapshot(nowNs, state, TARGET, pipeline.decoder().malformedRecords(),
                LAYERS);
        if (snapshot == null || snapshot.state() != state) {
            throw new AssertionError("no snapshot at " + nowNs);
        }
        return snapshot;
    }

    /** The snapshot's JSON line: one line that parses back to an object, nothing in it that acts on a terminal. */
    private static void jsonLine(Snapshot snapshot) {
        String line = JsonLinesView.toJson(snapshot);
        if (!SafeText.isSafe(line)) {
            throw new AssertionError("a raw control in " + SafeText.of(line));
        }
        try {
            JsonNode parsed = JSON.readTree(line);
            if (!parsed.isObject()) {
                throw new AssertionError("not an object: " + line);
            }
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + line, e);
        }
    }

    /**
     * What the target's memory holds at {@code address}, as TargetTensorSource reads it: a struct made from the
     * address's bits (type, four dimensions up to 2^41, a name that may end in ".weight"), unreadable for some,
     * and taken only through the reader's own checks ({@link TensorHeaders#parseStruct}).
     */
    static RooflineAggregator.Source source(long address) {
        long bits = mix(address);
        if ((bits & 7) == 0) {
            return null;
        }
        byte[] struct = new byte[TensorHeaders.structSpanBytes(TENSOR)];
        ByteBuffer out = ByteBuffer.wrap(struct).order(ByteOrder.nativeOrder());
        out.putInt(TENSOR.typeOffset(), (int) ((bits >>> 3) % (TYPES.count() + 1)));
        for (int i = 0; i < 4; i++) {
            bits = mix(bits);
            long dimension = (bits & 1) == 0 ? 1 + (bits >>> 1) % 4096 : (bits >>> 1) % (1L << 41);
            out.putLong(TENSOR.neOffset() + 8 * i, dimension);
        }
        if ((bits & 2) != 0) {
            out.put(TENSOR.nameOffset(), "blk.0.ffn_up.weight".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
        TensorHeaders.Header header = TensorHeaders.parseStruct(struct, 0, TENSOR, TYPES);
        return header == null ? null
                : new RooflineAggregator.Source(header, TensorHeaders.nameEndsWith(struct, 0, TENSOR, ".weight"));
    }

    /** SplitMix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
