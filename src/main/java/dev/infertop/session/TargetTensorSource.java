package dev.infertop.session;

import dev.infertop.agg.RooflineAggregator;
import dev.infertop.process.TargetMemory;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TensorLayout;
import dev.infertop.process.layout.TypeTable;

/**
 * A node's source that is no node of its graph (a weight, an input, the KV cache) as the target holds it: type
 * and shape at the calibrated offsets, and whether it is a model weight (llama.cpp names them "….weight"), read
 * from its memory for the roofline, which caches it. One read of the struct's first bytes gives all three (it
 * was one for the header and one for the name), and the roofline's refresh of its cached leaves reads all of
 * them in one syscall (it was two each: a visible share of infertop's CPU with every graph traced; measurements.md).
 * What is read is the target's: a header outside the type table or the dimensions' bounds is no answer.
 */
final class TargetTensorSource implements RooflineAggregator.WeightSource {
    private static final String WEIGHT_SUFFIX = ".weight";

    private final int pid;
    private final TensorLayout layout;
    private final TypeTable types;
    private final int spanBytes;
    // The refresh's buffers, grown to the most leaves read at once (collector thread only).
    private byte[] structs = new byte[0];
    private boolean[] read = new boolean[0];

    TargetTensorSource(int pid, TensorLayout layout, TypeTable types) {
        this.pid = pid;
        this.layout = layout;
        this.types = types;
        this.spanBytes = TensorHeaders.structSpanBytes(layout);
    }

    @Override
    public RooflineAggregator.Source read(long address) {
        byte[] struct = TargetMemory.bytes(pid, address, spanBytes);
        return struct == null ? null : source(struct, 0);
    }

    @Override
    public void readAll(long[] addresses, int count, RooflineAggregator.Source[] into) {
        if (structs.length < count * spanBytes) {
            structs = new byte[count * spanBytes];
            read = new boolean[count];
        }
        TargetMemory.bytesEach(pid, addresses, count, spanBytes, structs, read);
        for (int i = 0; i < count; i++) {
            into[i] = read[i] ? source(structs, i * spanBytes) : null;
        }
    }

    private RooflineAggregator.Source source(byte[] bytes, int at) {
        TensorHeaders.Header header = TensorHeaders.parseStruct(bytes, at, layout, types);
        return header == null ? null
                : new RooflineAggregator.Source(header, TensorHeaders.nameEndsWith(bytes, at, layout, WEIGHT_SUFFIX));
    }
}
