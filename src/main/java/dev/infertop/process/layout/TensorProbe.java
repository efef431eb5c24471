package dev.infertop.process.layout;

import dev.infertop.process.layout.StructScan.Sample;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Calibrates struct ggml_tensor: makes tensors whose field values are known (distinct shapes and types, ops
 * with known sources, a view at a known offset, permutes with known axes, a name) and finds each value's
 * offset with {@link StructScan}. Every value used is either chosen here or follows from ggml's format
 * (F32 elements are 4 bytes, F16 2, I32 4); op and type numbers come from the library's own name tables.
 */
final class TensorProbe {
    static final String PROBE_NAME = "infertop-probe-α";
    /** Longer than any GGML_MAX_NAME: ggml_set_name truncates it to GGML_MAX_NAME - 1 chars. */
    static final int LONG_NAME_CHARS = 255;
    static final long VIEW_OFFSET_BYTES = 28;

    record Result(TensorLayout layout, int outputFlag, long objectHeaderBytes) {}

    private final GgmlLibrary ggml;
    private final Path library;
    private final OpTable ops;

    private TensorProbe(GgmlLibrary ggml, OpTable ops) {
        this.ggml = ggml;
        this.library = ggml.path();
        this.ops = ops;
    }

    static Result calibrate(GgmlLibrary ggml, OpTable ops, TypeTable types) throws CalibrationException {
        return new TensorProbe(ggml, ops).run(types);
    }

    private Result run(TypeTable types) throws CalibrationException {
        int f32 = type(types, "f32");
        int f16 = type(types, "f16");
        int i32 = type(types, "i32");
        try (ProbeContext probe = ProbeContext.open(ggml, false)) {
            MemorySegment ctx = probe.context();
            MemorySegment a = ggml.newTensor4d(ctx, f32, 3, 5, 7, 11);
            // ggml puts the first object at the start of the buffer: the tensor follows the object header.
            long headerBytes = probe.offsetOf(a);
            int sizeBytes = structSize(headerBytes);
            MemorySegment b = ggml.newTensor4d(ctx, f32, 3, 5, 7, 11);
            MemorySegment h = ggml.newTensor4d(ctx, f16, 13, 2, 3, 4);
            MemorySegment i = ggml.newTensor2d(ctx, i32, 6, 9);
            MemorySegment m1 = ggml.newTensor3d(ctx, f32, 17, 19, 2);
            MemorySegment m2 = ggml.newTensor3d(ctx, f32, 17, 23, 2);
            MemorySegment sum = ggml.add(ctx, a, b);
            MemorySegment prod = ggml.mul(ctx, sum, b);
            MemorySegment mm = ggml.mulMat(ctx, m1, m2);
            MemorySegment view = ggml.view1d(ctx, a, 6, VIEW_OFFSET_BYTES);
            MemorySegment perm1 = ggml.permute(ctx, a, 1, 2, 0, 3);
            MemorySegment perm2 = ggml.permute(ctx, b, 2, 0, 1, 3);
            ggml.setName(a, PROBE_NAME);
            ggml.setName(h, "n".repeat(LONG_NAME_CHARS));

            StructScan scan = new StructScan(library, "ggml_tensor", sizeBytes);
            MemorySegment va = probe.view(a, sizeBytes), vb = probe.view(b, sizeBytes),
                    vh = probe.view(h, sizeBytes), vi = probe.view(i, sizeBytes), vm1 = probe.view(m1, sizeBytes),
                    vsum = probe.view(sum, sizeBytes), vprod = probe.view(prod, sizeBytes),
                    vmm = probe.view(mm, sizeBytes), vview = probe.view(view, sizeBytes),
                    vperm1 = probe.view(perm1, sizeBytes), vperm2 = probe.view(perm2, sizeBytes);

            int type = scan.unique("type", List.of(Sample.int32(va, f32), Sample.int32(vh, f16),
                    Sample.int32(vi, i32), Sample.int32(vmm, f32)));
            int ne = scan.unique("ne", List.of(Sample.int64(va, 3, 5, 7, 11), Sample.int64(vh, 13, 2, 3, 4),
                    Sample.int64(vi, 6, 9, 1, 1), Sample.int64(vm1, 17, 19, 2, 1), Sample.int64(vmm, 19, 23, 2, 1)));
            int nb = scan.unique("nb", List.of(Sample.int64(va, 4, 12, 60, 420), Sample.int64(vh, 2, 26, 52, 156),
                    Sample.int64(vi, 4, 24, 216, 216)));
            int op = scan.unique("op", List.of(Sample.int32(va, op("NONE")), Sample.int32(vsum, op("ADD")),
                    Sample.int32(vprod, op("MUL")), Sample.int32(vmm, op("MUL_MAT")),
                    Sample.int32(vview, op("VIEW")), Sample.int32(vperm1, op("PERMUTE"))));
            int opParams = scan.unique("op_params", List.of(Sample.int32(vperm1, 1, 2, 0, 3),
                    Sample.int32(vperm2, 2, 0, 1, 3)));
            MemorySegment none = MemorySegment.NULL;
            int src = scan.unique("src[0]", List.of(Sample.pointer(vsum, a, b), Sample.pointer(vprod, sum, b),
                    Sample.pointer(vmm, m1, m2), Sample.pointer(vview, a), Sample.pointer(vperm2, b),
                    Sample.pointer(va, none)));
            List<Integer> viewSrcCandidates = new ArrayList<>(scan.candidates(List.of(Sample.pointer(vview, a),
                    Sample.pointer(vperm1, a), Sample.pointer(vperm2, b), Sample.pointer(vsum, none),
                    Sample.pointer(va, none))));
            viewSrcCandidates.remove(Integer.valueOf(src));
            int viewSrc = scan.uniqueOf("view_src", viewSrcCandidates);
            int maxSrc = (viewSrc - src) / 8;
            int viewOffs = viewSrc + 8;
            if (StructScan.int64At(vview, viewOffs) != VIEW_OFFSET_BYTES || StructScan.int64At(vperm1, viewOffs) != 0) {
                throw CalibrationException.of(library, "ggml_tensor.view_offs does not follow view_src at " + viewSrc);
            }
            MemorySegment dataOfA = dataOf(a, sizeBytes);
            int data = scan.unique("data", List.of(Sample.pointer(va, dataOfA), Sample.pointer(vsum, dataOf(sum, sizeBytes)),
                    Sample.pointer(vview, MemorySegment.ofAddress(dataOfA.address() + VIEW_OFFSET_BYTES))));
            int name = nameOffset(a, va);
            int maxName = longNameLength(vh, name) + 1;
            int flags = flagsOffset(prod, probe, sizeBytes);
            int outputFlag = StructScan.int32At(probe.view(prod, sizeBytes), flags);

            TensorLayout layout = new TensorLayout(type, ne, nb, op, opParams, flags - opParams, flags, src, maxSrc,
                    viewSrc, viewOffs, data, name, maxName, sizeBytes);
            LayoutInvariants.checkTensor(library, layout);
            return new Result(layout, outputFlag, headerBytes);
        }
    }

    private int type(TypeTable types, String name) throws CalibrationException {
        return types.number(name).orElseThrow(() -> CalibrationException.of(library,
                "its ggml_type_name table has no type '" + name + "'"));
    }

    private int op(String name) throws CalibrationException {
        return ops.number(name).orElseThrow(() -> CalibrationException.of(library,
                "its ggml_op_name table has no op '" + name + "'"));
    }

    /** sizeof(struct ggml_tensor), from ggml_tensor_overhead() or, lacking it, from a no_alloc context. */
    private int structSize(long headerBytes) throws CalibrationException {
        long size;
        var overhead = ggml.tensorOverhead();
        if (overhead.isPresent()) {
            size = overhead.get() - headerBytes;
        } else {
            // In a no_alloc context consecutive objects are header + GGML_PAD(sizeof(tensor), GGML_MEM_ALIGN).
            try (ProbeContext bare = ProbeContext.open(ggml, true)) {
                MemorySegment first = ggml.newTensor1d(bare.context(), 0, 1);
                MemorySegment second = ggml.newTensor1d(bare.context(), 0, 1);
                size = second.address() - first.address() - headerBytes;
            }
        }
        if (headerBytes < 8 || headerBytes > 256 || size < 64 || size > 4096) {
            throw CalibrationException.of(library, "implausible object header " + headerBytes
                    + " B / ggml_tensor size " + size + " B");
        }
        return (int) size;
    }

    /** t->data: ggml_get_data where present; else, in a context that allocates, data directly follows the struct. */
    private MemorySegment dataOf(MemorySegment tensor, int sizeBytes) throws CalibrationException {
        return ggml.getData(tensor).orElse(MemorySegment.ofAddress(tensor.address() + sizeBytes));
    }

    /** ggml_get_name returns &t->name[0]; the bytes there must be the name we set. */
    private int nameOffset(MemorySegment tensor, MemorySegment struct) throws CalibrationException {
        long offset = ggml.getName(tensor).address() - tensor.address();
        byte[] expected = (PROBE_NAME + "\0").getBytes(StandardCharsets.UTF_8);
        if (offset < 0 || offset + expected.length > struct.byteSize()
                || !Arrays.equals(struct.asSlice(offset, expected.length).toArray(ValueLayout.JAVA_BYTE), expected)) {
            throw CalibrationException.of(library, "ggml_get_name does not point at the name ggml_set_name stored"
                    + " (offset " + offset + ")");
        }
        return (int) offset;
    }

    /** ggml_set_name keeps GGML_MAX_NAME - 1 chars of a longer name. */
    private int longNameLength(MemorySegment struct, int nameOffset) throws CalibrationException {
        for (int i = nameOffset; i < struct.byteSize(); i++) {
            if (struct.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return i - nameOffset;
            }
        }
        throw CalibrationException.of(library, "the tensor name is not NUL-terminated within the struct");
    }

    /** ggml_set_output (or _input) changes exactly one int32 of the struct: flags. */
    private int flagsOffset(MemorySegment tensor, ProbeContext probe, int sizeBytes) throws CalibrationException {
        byte[] before = probe.view(tensor, sizeBytes).toArray(ValueLayout.JAVA_BYTE);
        if (!ggml.markOutputOrInput(tensor)) {
            throw CalibrationException.of(library, "it lacks both ggml_set_output and ggml_set_input (needed to find flags)");
        }
        MemorySegment after = probe.view(tensor, sizeBytes);
        MemorySegment old = MemorySegment.ofArray(before);
        List<Integer> changed = new ArrayList<>();
        for (int offset = 0; offset + 4 <= sizeBytes; offset += 4) {
            if (StructScan.int32At(old, offset) != StructScan.int32At(after, offset)) {
                changed.add(offset);
            }
        }
        if (changed.size() != 1 || Integer.bitCount(StructScan.int32At(after, changed.getFirst())
                ^ StructScan.int32At(old, changed.getFirst())) != 1) {
            throw CalibrationException.of(library, "ggml_set_output changed ggml_tensor words " + changed
                    + ", not one flag bit");
        }
        return changed.getFirst();
    }
}
