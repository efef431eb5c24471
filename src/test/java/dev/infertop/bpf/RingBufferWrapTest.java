package dev.infertop.bpf;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A record that runs past the end of the (singly mapped) ring is read whole, in its order. */
class RingBufferWrapTest {
    @Test
    void aWrappingRecordIsJoinedTailThenHead() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ring = arena.allocate(64, 8);
            for (int i = 0; i < 64; i++) {
                ring.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            MemorySegment into = arena.allocate(32, 8);
            // 24 bytes from offset 48: 48..63, then 0..7
            MemorySegment joined = RingBufferReader.joinWrapped(ring, 48, 24, into);
            for (int i = 0; i < 16; i++) {
                assertEquals(48 + i, joined.get(ValueLayout.JAVA_BYTE, i));
            }
            for (int i = 0; i < 8; i++) {
                assertEquals(i, joined.get(ValueLayout.JAVA_BYTE, 16 + i));
            }
            ring.set(ValueLayout.JAVA_INT, 60, 0x44332211); // a long field across the end reads as one value
            ring.set(ValueLayout.JAVA_INT, 0, 0x88776655);
            assertEquals(0x8877665544332211L,
                    RingBufferReader.joinWrapped(ring, 56, 16, into).get(ValueLayout.JAVA_LONG_UNALIGNED, 4));
        }
    }
}
