package dev.infertop.process;

import dev.infertop.ffi.LibC;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Reads the traced process's memory with process_vm_readv(2) (root, or ptrace rights over it), off the probes'
 * path: the operator DAG's leaf names and the roofline's source tensors (weights, inputs, the KV cache), which the
 * probes do not read. One syscall per read and no file: opening /proc/PID/mem for each read cost more than the
 * read (the kernel's ptrace check on every open), and the roofline reads a graph's leaves again every few dozen
 * graphs. What is read is the target's and untrusted: callers bound and check it.
 */
public final class TargetMemory {
    private TargetMemory() {}

    /**
     * The NUL-terminated string of at most {@code maxBytes} at {@code address} in process {@code pid}, or null
     * when it cannot be read (the process is gone, the address is not mapped).
     */
    public static String cString(int pid, long address, int maxBytes) {
        if (address <= 0 || maxBytes <= 0 || maxBytes > 1 << 20) {
            return null;
        }
        byte[] bytes = new byte[maxBytes];
        int read = readWithin(DeadlineReads.TARGET, pid, address, bytes);
        if (read <= 0) {
            return null;
        }
        int length = 0;
        while (length < read && bytes[length] != 0) {
            length++;
        }
        return new String(bytes, 0, length, StandardCharsets.UTF_8);
    }

    /** {@code length} bytes at {@code address} in process {@code pid}, or null when they cannot all be read. */
    public static byte[] bytes(int pid, long address, int length) {
        return bytes(DeadlineReads.TARGET, pid, address, length);
    }

    /** {@link #bytes(int, long, int)} on the reader thread of {@code reads}. */
    static byte[] bytes(DeadlineReads reads, int pid, long address, int length) {
        if (address <= 0 || length <= 0 || length > 1 << 20) {
            return null;
        }
        byte[] bytes = new byte[length];
        return readWithin(reads, pid, address, bytes) == length ? bytes : null;
    }

    /** {@link #read} on {@code reads}' thread, given up past its deadline (-1). */
    private static int readWithin(DeadlineReads reads, int pid, long address, byte[] into) {
        return reads.read("reading process " + pid + "'s memory at 0x" + Long.toHexString(address),
                () -> read(pid, address, into), -1);
    }

    /** Remote ranges one process_vm_readv takes at most (IOV_MAX). */
    static final int MAX_RANGES_PER_CALL = 1024;

    /**
     * {@code count} ranges of {@code bytesEach} bytes, range i at {@code addresses[i]}, into {@code into} from
     * {@code i * bytesEach}: one syscall for all of them (up to {@link #MAX_RANGES_PER_CALL} a call) where the
     * per-range reads were one each. {@code read[i]} says whether range i was read whole. The kernel copies the
     * ranges in order and stops at the first it cannot read: the ones after it are read by the next call, so a
     * range that is not mapped costs one call more, not the rest.
     */
    public static void bytesEach(int pid, long[] addresses, int count, int bytesEach, byte[] into, boolean[] read) {
        if (count < 0 || count > addresses.length || count > read.length || bytesEach <= 0 || bytesEach > 1 << 16
                || (long) count * bytesEach > into.length) {
            throw new IllegalArgumentException("bad ranges: " + count + " of " + bytesEach + " bytes");
        }
        java.util.Arrays.fill(read, 0, count, false);
        if (count == 0) {
            return;
        }
        // Read into copies on the reader thread: one abandoned past its deadline must not write here later.
        byte[] bytes = new byte[count * bytesEach];
        boolean[] whole = new boolean[count];
        boolean done = DeadlineReads.TARGET.read("reading process " + pid + "'s memory (" + count + " ranges)", () -> {
            bytesEachNow(pid, addresses.clone(), count, bytesEach, bytes, whole);
            return true;
        }, false);
        if (done) {
            System.arraycopy(bytes, 0, into, 0, bytes.length);
            System.arraycopy(whole, 0, read, 0, count);
        }
    }

    private static void bytesEachNow(int pid, long[] addresses, int count, int bytesEach, byte[] into, boolean[] read) {
        try (Arena arena = Arena.ofConfined()) {
            int most = Math.min(count, MAX_RANGES_PER_CALL);
            MemorySegment buffer = arena.allocate((long) most * bytesEach);
            MemorySegment local = arena.allocate(LibC.IOVEC_BYTES, 8);
            MemorySegment remote = arena.allocate(LibC.IOVEC_BYTES * most, 8);
            int next = 0;
            while (next < count) {
                int ranges = Math.min(count - next, MAX_RANGES_PER_CALL);
                int sent = 0;
                for (int i = 0; i < ranges; i++) {
                    long address = addresses[next + i];
                    if (address <= 0) {
                        break; // never asked for: the ranges before it go, and it is skipped below
                    }
                    remote.set(ValueLayout.JAVA_LONG, LibC.IOVEC_BYTES * i, address);
                    remote.set(ValueLayout.JAVA_LONG, LibC.IOVEC_BYTES * i + 8, bytesEach);
                    sent++;
                }
                long got = -1;
                if (sent > 0) {
                    local.set(ValueLayout.ADDRESS, 0, buffer);
                    local.set(ValueLayout.JAVA_LONG, 8, (long) sent * bytesEach);
                    got = (long) LibC.process_vm_readv$handle().invokeExact(pid, local, 1L, remote, (long) sent, 0L);
                }
                int whole = got <= 0 ? 0 : (int) (got / bytesEach);
                MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, into, next * bytesEach, whole * bytesEach);
                java.util.Arrays.fill(read, next, next + whole, true);
                next += whole < ranges ? whole + 1 : ranges; // the range it stopped at: not readable, skipped
            }
        } catch (Throwable t) {
            // what was read stays marked; the rest reads as unreadable
        }
    }

    /**
     * Fills {@code into} from {@code address} onwards (on the calling thread); the bytes read (fewer where the mapping ends: a string near
     * the end of its page), or -1.
     */
    private static int read(int pid, long address, byte[] into) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(into.length);
            MemorySegment local = arena.allocate(LibC.IOVEC_BYTES, 8);
            local.set(ValueLayout.ADDRESS, 0, buffer);
            local.set(ValueLayout.JAVA_LONG, 8, into.length);
            MemorySegment remote = arena.allocate(LibC.IOVEC_BYTES, 8);
            remote.set(ValueLayout.JAVA_LONG, 0, address);
            remote.set(ValueLayout.JAVA_LONG, 8, into.length);
            long read = (long) LibC.process_vm_readv$handle().invokeExact(pid, local, 1L, remote, 1L, 0L);
            if (read <= 0) {
                return -1;
            }
            MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, into, 0, (int) read);
            return (int) read;
        } catch (Throwable t) {
            return -1;
        }
    }
}
