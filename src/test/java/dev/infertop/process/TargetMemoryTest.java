package dev.infertop.process;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reads of a process's memory, tried on this JVM's own (process_vm_readv needs no rights over oneself). */
class TargetMemoryTest {
    private static final int SELF = (int) ProcessHandle.current().pid();

    @Test
    void readsBytesAndAStringStoppingAtItsNul() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocateFrom("blk.0.attn_q.weight");
            assertEquals("blk.0.attn_q.weight", TargetMemory.cString(SELF, text.address(), 64));
            assertEquals("blk.0", TargetMemory.cString(SELF, text.address(), 5), "bounded by maxBytes");
            MemorySegment words = arena.allocate(16, 8);
            words.set(ValueLayout.JAVA_LONG, 0, 0x0102030405060708L);
            byte[] bytes = TargetMemory.bytes(SELF, words.address(), 8);
            assertArrayEquals(new byte[] {8, 7, 6, 5, 4, 3, 2, 1}, bytes);
        }
    }

    @Test
    void nothingWhereNothingIsMappedAndAStringCutAtTheEndOfItsMapping() throws Throwable {
        int page = (int) LibC.getpagesize$handle().invokeExact();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment two = pageBeforeAHole(arena, page);
            MemorySegment first = two.reinterpret(page);
            byte[] tail = "abc".getBytes(StandardCharsets.US_ASCII); // no NUL: the mapping ends first
            MemorySegment.copy(tail, 0, first, ValueLayout.JAVA_BYTE, page - 3, 3);
            assertEquals("abc", TargetMemory.cString(SELF, two.address() + page - 3, 64));
            assertNull(TargetMemory.bytes(SELF, two.address() + page - 3, 64), "not all of it is there");
            assertNull(TargetMemory.bytes(SELF, two.address() + page, 8), "unmapped");
            assertNull(TargetMemory.cString(SELF, two.address() + page, 8), "unmapped");
            assertNull(TargetMemory.bytes(SELF, 0, 8));
            assertEquals(0, (int) LibC.munmap$handle().invokeExact(two, (long) page));
        }
    }

    @Test
    void manyRangesAtOnceSkippingOnlyThoseThatCannotBeRead() throws Throwable {
        int page = (int) LibC.getpagesize$handle().invokeExact();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment two = pageBeforeAHole(arena, page);
            MemorySegment words = arena.allocate(8 * 5, 8);
            for (int i = 0; i < 5; i++) {
                words.set(ValueLayout.JAVA_LONG, 8L * i, 0x1111111111111111L * (i + 1));
            }
            long w = words.address();
            long[] addresses = {w, two.address() + page, w + 16, two.address() + page - 4, 0, w + 32, w + 8};
            byte[] into = new byte[8 * addresses.length];
            boolean[] read = new boolean[addresses.length];
            TargetMemory.bytesEach(SELF, addresses, addresses.length, 8, into, read);
            assertArrayEquals(new boolean[] {true, false, true, false, false, true, true}, read,
                    "unmapped, cut at the end of its mapping and null are not read; the ranges after them are");
            java.nio.ByteBuffer got = java.nio.ByteBuffer.wrap(into).order(java.nio.ByteOrder.nativeOrder());
            assertEquals(0x1111111111111111L, got.getLong(0));
            assertEquals(0x3333333333333333L, got.getLong(16));
            assertEquals(0x5555555555555555L, got.getLong(40));
            assertEquals(0x2222222222222222L, got.getLong(48));

            TargetMemory.bytesEach(SELF, addresses, 1, 8, into, read);
            assertArrayEquals(new boolean[] {true, false, true, false, false, true, true}, read, "only count are touched");
            assertEquals(0, (int) LibC.munmap$handle().invokeExact(two, (long) page));
        }
    }

    @Test
    void moreRangesThanOneCallTakes() {
        try (Arena arena = Arena.ofConfined()) {
            int count = TargetMemory.MAX_RANGES_PER_CALL * 2 + 3;
            MemorySegment values = arena.allocate(4L * count, 4);
            long[] addresses = new long[count];
            for (int i = 0; i < count; i++) {
                values.set(ValueLayout.JAVA_INT, 4L * i, i * 7);
                addresses[i] = values.address() + 4L * (count - 1 - i); // backwards: each range its own
            }
            byte[] into = new byte[4 * count];
            boolean[] read = new boolean[count];
            TargetMemory.bytesEach(SELF, addresses, count, 4, into, read);
            java.nio.ByteBuffer got = java.nio.ByteBuffer.wrap(into).order(java.nio.ByteOrder.nativeOrder());
            for (int i = 0; i < count; i++) {
                assertTrue(read[i], "range " + i);
                assertEquals((count - 1 - i) * 7, got.getInt(4 * i), "range " + i);
            }
        }
    }

    /** A mapped page with nothing mapped after it (two mapped, the second unmapped); munmap the first when done. */
    private static MemorySegment pageBeforeAHole(Arena arena, int page) throws Throwable {
        MemorySegment state = Errno.allocate(arena);
        MemorySegment two = (MemorySegment) LibC.mmap$handle().invokeExact(state, MemorySegment.NULL, 2L * page,
                LibC.PROT_READ | LibC.PROT_WRITE, 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, -1, 0L);
        assertEquals(0, (int) LibC.munmap$handle().invokeExact(MemorySegment.ofAddress(two.address() + page), (long) page));
        return two;
    }

    @Test
    void aProcessThatIsGoneReadsAsNothing() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocateFrom("x");
            assertNull(TargetMemory.cString((int) gone.pid(), text.address(), 8));
            boolean[] read = {true, true};
            TargetMemory.bytesEach((int) gone.pid(), new long[] {text.address(), text.address()}, 2, 1, new byte[2], read);
            assertArrayEquals(new boolean[] {false, false}, read);
        }
    }
}
