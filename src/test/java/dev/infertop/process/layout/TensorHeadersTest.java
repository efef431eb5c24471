package dev.infertop.process.layout;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A tensor header written into this JVM's own memory, read back through /proc/self/mem like a target's. */
class TensorHeadersTest {
    private static final int PID = (int) ProcessHandle.current().pid();

    @Test
    void aWeightsTypeAndShapeAreReadAtTheCalibratedOffsetsAndNonsenseIsNoAnswer() {
        CalibratedLayout layout = LayoutAnswerTest.v050(); // type at 0, ne at 16
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tensor = arena.allocate(layout.tensor().sizeBytes(), 8);
            tensor.set(ValueLayout.JAVA_INT, layout.tensor().typeOffset(), 2); // q4_0 in the v0.5.0 table
            long[] ne = {4096, 11008, 1, 1};
            for (int i = 0; i < 4; i++) {
                tensor.set(ValueLayout.JAVA_LONG, layout.tensor().neOffset() + 8L * i, ne[i]);
            }
            TensorHeaders.Header header = TensorHeaders.read(PID, tensor.address(), layout.tensor(), layout.types());
            assertEquals(new TensorHeaders.Header(2, 4096, 11008, 1, 1), header);
            assertEquals(11008L * 4096 / 32 * 18, layout.types().bytes(header.type(), header.ne0()).orElseThrow()
                    * header.ne1(), "the weight's bytes in Q4_0 blocks");

            tensor.set(ValueLayout.JAVA_INT, layout.tensor().typeOffset(), 4); // a removed type: a gap
            assertNull(TensorHeaders.read(PID, tensor.address(), layout.tensor(), layout.types()));
            tensor.set(ValueLayout.JAVA_INT, layout.tensor().typeOffset(), 0);
            tensor.set(ValueLayout.JAVA_LONG, layout.tensor().neOffset(), 0); // no dimension is 0
            assertNull(TensorHeaders.read(PID, tensor.address(), layout.tensor(), layout.types()));
            assertNull(TensorHeaders.read(PID, 8, layout.tensor(), layout.types()), "an unmapped address");
        }
    }

    @Test
    void oneReadOfTheStructGivesTypeShapeAndWhetherTheNameEndsSo() {
        TensorLayout tensor = LayoutAnswerTest.v050().tensor();
        TypeTable types = LayoutAnswerTest.v050().types();
        int span = TensorHeaders.structSpanBytes(tensor);
        assertTrue(span >= tensor.nameOffset() + tensor.maxNameBytes() && span >= tensor.neOffset() + 32);
        int at = 40; // a struct inside a larger buffer, as the refresh reads them
        byte[] bytes = new byte[at + span + 8];
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.nativeOrder());
        buffer.putInt(at + tensor.typeOffset(), 1);
        long[] ne = {64, 32, 2, 1};
        for (int i = 0; i < 4; i++) {
            buffer.putLong(at + tensor.neOffset() + 8 * i, ne[i]);
        }
        assertEquals(new TensorHeaders.Header(1, 64, 32, 2, 1), TensorHeaders.parseStruct(bytes, at, tensor, types));
        assertFalse(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"), "no name");
        name(bytes, at, tensor, "blk.0.attn_q.weight");
        assertTrue(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"));
        name(bytes, at, tensor, ".weight");
        assertTrue(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"));
        name(bytes, at, tensor, "weight");
        assertFalse(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"), "shorter than the suffix");
        name(bytes, at, tensor, "cache_k_l0 (view of a .weight)");
        assertFalse(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"));
        // No NUL in the field: the name is cut at its size, and what lies past it is not read as its end.
        byte[] full = "x".repeat(tensor.maxNameBytes() - 7).concat(".weight").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        System.arraycopy(full, 0, bytes, at + tensor.nameOffset(), full.length);
        assertTrue(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"));
        bytes[at + tensor.nameOffset() + tensor.maxNameBytes() - 1] = 'X';
        assertFalse(TensorHeaders.nameEndsWith(bytes, at, tensor, ".weight"));
    }

    private static void name(byte[] bytes, int at, TensorLayout tensor, String name) {
        java.util.Arrays.fill(bytes, at + tensor.nameOffset(), at + tensor.nameOffset() + tensor.maxNameBytes(), (byte) 0);
        byte[] ascii = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        System.arraycopy(ascii, 0, bytes, at + tensor.nameOffset(), ascii.length);
    }
}
