package dev.infertop.session;

import dev.infertop.agg.RooflineAggregator;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TensorLayout;
import dev.infertop.process.layout.TypeTable;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Tensors written into this JVM's own memory, read back as a target's (process_vm_readv needs no rights over oneself). */
class TargetTensorSourceTest {
    private static final int SELF = (int) ProcessHandle.current().pid();
    /** struct ggml_tensor of llama.cpp v0.5.0: type at 0, ne at 16, name at 256 (64 bytes), 336 in all. */
    private static final TensorLayout TENSOR = new TensorLayout(0, 16, 48, 80, 84, 64, 148, 152, 10, 232, 240, 248,
            256, 64, 336);
    private static final TypeTable TYPES = new TypeTable(List.of("f32", "f16"),
            List.of(new TypeTable.BlockSize(4, 1), new TypeTable.BlockSize(2, 1)));

    @Test
    void aRefreshReadsInOneGoWhatEachReadWouldAndSkipsTheUnreadable() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment weight = tensor(arena, 1, new long[] {64, 32, 1, 1}, "blk.0.attn_q.weight");
            MemorySegment kv = tensor(arena, 1, new long[] {64, 256, 1, 1}, "cache_k_l0");
            MemorySegment nonsense = tensor(arena, 7, new long[] {64, 1, 1, 1}, "inp_embd"); // no type 7
            TargetTensorSource source = new TargetTensorSource(SELF, TENSOR, TYPES);
            long[] addresses = {weight.address(), 8, kv.address(), nonsense.address(), weight.address()};
            RooflineAggregator.Source[] each = new RooflineAggregator.Source[addresses.length];
            for (int i = 0; i < addresses.length; i++) {
                each[i] = source.read(addresses[i]);
            }
            assertEquals(new RooflineAggregator.Source(new TensorHeaders.Header(1, 64, 32, 1, 1), true), each[0]);
            assertEquals(new RooflineAggregator.Source(new TensorHeaders.Header(1, 64, 256, 1, 1), false), each[2]);
            assertNull(each[1], "not mapped");
            assertNull(each[3], "a type the table does not have");

            RooflineAggregator.Source[] all = new RooflineAggregator.Source[addresses.length];
            source.readAll(addresses, addresses.length, all);
            assertArrayEquals(each, all);

            kv.set(ValueLayout.JAVA_LONG, TENSOR.neOffset() + 8, 512); // the KV view grows in place
            source.readAll(new long[] {kv.address()}, 1, all);
            assertEquals(new TensorHeaders.Header(1, 64, 512, 1, 1), all[0].header(), "read again, not kept");
        }
    }

    private static MemorySegment tensor(Arena arena, int type, long[] ne, String name) {
        MemorySegment tensor = arena.allocate(TENSOR.sizeBytes(), 8);
        tensor.set(ValueLayout.JAVA_INT, TENSOR.typeOffset(), type);
        for (int i = 0; i < 4; i++) {
            tensor.set(ValueLayout.JAVA_LONG, TENSOR.neOffset() + 8L * i, ne[i]);
        }
        tensor.asSlice(TENSOR.nameOffset(), TENSOR.maxNameBytes()).setString(0, name);
        return tensor;
    }
}
