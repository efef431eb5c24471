package dev.infertop.target;

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
            MemorySegment state = Errno.allocate(arena);
            MemorySegment two = (MemorySegment) LibC.mmap$handle().invokeExact(state, MemorySegment.NULL, 2L * page,
                    LibC.PROT_READ | LibC.PROT_WRITE, 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, -1, 0L);
            assertEquals(0, (int) LibC.munmap$handle().invokeExact(MemorySegment.ofAddress(two.address() + page), (long) page));
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
    void aProcessThatIsGoneReadsAsNothing() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocateFrom("x");
            assertNull(TargetMemory.cString((int) gone.pid(), text.address(), 8));
        }
    }
}
