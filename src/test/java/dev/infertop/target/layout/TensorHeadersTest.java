package dev.infertop.target.layout;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
}
