package dev.infertop.bpf;

import dev.infertop.event.RecordHandler;
import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibC;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Consumes a BPF_MAP_TYPE_RINGBUF map straight from its shared memory, as libbpf's ringbuf.c does, but
 * without a callback per record: {@link #drain(RecordHandler)} hands the handler the mapped data segment
 * and an offset, so reading a record allocates nothing.
 *
 * <p>Kernel layout (kernel/bpf/ringbuf.c): page 0 holds the consumer position (we write it), page 1 the
 * producer position (kernel writes it), then the data area. Each record has an 8-byte header: u32 length with
 * BUSY (bit 31) and DISCARD (bit 30) flags, then u32 page offset; the record is padded to 8 bytes. The kernel
 * lets a consumer map the data area twice in a row so that a record that wraps is contiguous (libbpf does);
 * here it is mapped once and the rare record that wraps is copied into a scratch segment: the second mapping
 * counts the same pages again in infertop's RSS (4 MiB more with the default --ring-kib).
 */
public final class RingBufferReader implements RecordSource, AutoCloseable {
    private static final int BUSY_BIT = 1 << 31;
    private static final int DISCARD_BIT = 1 << 30;
    private static final int HEADER_BYTES = 8;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Arena arena = Arena.ofShared();
    private final int mapFd;
    private final long pageSize;
    private final long dataSizeBytes;
    private final long mask;
    private MemorySegment consumerPage;
    private MemorySegment producerArea;
    private MemorySegment data;
    private final MemorySegment pollFd;
    private final MemorySegment errno;

    public RingBufferReader(int mapFd, long dataSizeBytes) throws BpfException {
        if (Long.bitCount(dataSizeBytes) != 1) {
            throw new IllegalArgumentException("ring buffer size must be a power of two: " + dataSizeBytes);
        }
        this.mapFd = mapFd;
        this.pageSize = LibC.pageSize();
        this.dataSizeBytes = dataSizeBytes;
        this.mask = dataSizeBytes - 1;
        this.consumerPage = mmap(pageSize, LibC.PROT_READ | LibC.PROT_WRITE, 0);
        this.producerArea = mmap(pageSize + dataSizeBytes, LibC.PROT_READ, pageSize);
        this.data = producerArea.asSlice(pageSize);
        this.pollFd = arena.allocate(16, 4);
        this.errno = Errno.allocate(arena);
        this.wakeFd = eventFd();
        pollFd.set(ValueLayout.JAVA_INT, 0, mapFd);
        pollFd.set(ValueLayout.JAVA_SHORT, 4, LibC.POLLIN);
        pollFd.set(ValueLayout.JAVA_INT, 8, wakeFd);
        pollFd.set(ValueLayout.JAVA_SHORT, 12, LibC.POLLIN);
    }

    /**
     * An eventfd polled with the ring: the reader waits up to half a second between drains when the ring
     * fills slowly, and a stop (q, a signal) must not wait that long. -1 (ignored by poll) if none.
     */
    private int eventFd() {
        try {
            return (int) LibC.eventfd$handle().invokeExact(errno, 0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);
        } catch (Throwable t) {
            return -1;
        }
    }

    private final int wakeFd;

    private MemorySegment mmap(long length, int prot, long offset) throws BpfException {
        MemorySegment address;
        int err;
        try (Arena local = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(local);
            address = (MemorySegment) LibC.mmap$handle().invokeExact(state, MemorySegment.NULL, length, prot,
                    LibC.MAP_SHARED, mapFd, offset);
            err = Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (address.address() == LibC.MAP_FAILED) {
            throw new BpfException("cannot map the ring buffer: " + LibC.strerror(err));
        }
        // SAFETY: the kernel mapped exactly `length` bytes at `address`; they stay mapped until close().
        return address.reinterpret(length, arena, null);
    }

    /** Longest a drain keeps following the producer. */
    private static final long MAX_DRAIN_NS = 500_000_000L;

    /**
     * Hands every committed record to {@code handler} and releases it to the kernel.
     *
     * @return the number of records handled
     */
    @Override
    public int drain(RecordHandler handler) {
        long consumer = (long) LONG.getAcquire(consumerPage, 0L);
        long producer = (long) LONG.getAcquire(producerArea, 0L);
        // A drain follows the producer while records keep coming (the cheapest way to keep up), but for half a
        // second at most: when the probes write as fast as this thread reads, it would otherwise never return,
        // and the collector would never tick, stop or exit.
        long deadlineNs = System.nanoTime() + MAX_DRAIN_NS;
        int records = 0;
        while (consumer < producer) {
            if ((records & 1023) == 1023 && System.nanoTime() > deadlineNs) {
                break;
            }
            long headerOffset = consumer & mask;
            int lengthWord = (int) INT.getAcquire(data, headerOffset);
            if ((lengthWord & BUSY_BIT) != 0) {
                break; // reserved but not yet submitted: later records wait behind it
            }
            int lengthBytes = lengthWord & ~(BUSY_BIT | DISCARD_BIT);
            if ((lengthWord & DISCARD_BIT) == 0) {
                long recordOffset = (headerOffset + HEADER_BYTES) & mask; // a header never wraps: 8-aligned
                if (recordOffset + lengthBytes <= dataSizeBytes) {
                    handler.onRecord(data, recordOffset, lengthBytes);
                } else {
                    handler.onRecord(unwrapped(data, recordOffset, lengthBytes), 0, lengthBytes);
                }
                records++;
            }
            consumer += (lengthBytes + HEADER_BYTES + 7) & ~7L;
            LONG.setRelease(consumerPage, 0L, consumer);
            if (consumer >= producer) {
                producer = (long) LONG.getAcquire(producerArea, 0L);
            }
        }
        return records;
    }

    /** Where wrapping records are put together; grown to the longest one seen (a few KB at most). */
    private MemorySegment scratch;

    private MemorySegment unwrapped(MemorySegment ring, long offset, int lengthBytes) {
        if (scratch == null || scratch.byteSize() < lengthBytes) {
            scratch = arena.allocate(Math.max(lengthBytes, 4096), 8);
        }
        return joinWrapped(ring, offset, lengthBytes, scratch);
    }

    /**
     * Copies the record of {@code lengthBytes} at {@code offset} that runs past the end of {@code ring} (its tail,
     * then its head from the ring's start) into {@code into}, which it returns.
     */
    static MemorySegment joinWrapped(MemorySegment ring, long offset, int lengthBytes, MemorySegment into) {
        long tail = ring.byteSize() - offset;
        MemorySegment.copy(ring, offset, into, 0, tail);
        MemorySegment.copy(ring, 0, into, tail, lengthBytes - tail);
        return into;
    }

    /** Bytes submitted but not yet drained: how far behind the reader is. */
    @Override
    public long backlogBytes() {
        return (long) LONG.getAcquire(producerArea, 0L) - (long) LONG.getAcquire(consumerPage, 0L);
    }

    @Override
    public long capacityBytes() {
        return dataSizeBytes;
    }

    /** Waits until the kernel signals data (only sent for records submitted with a wake-up) or a timeout. */
    @Override
    public void await(int timeoutMs) {
        try {
            int ignored = (int) LibC.poll$handle().invokeExact(errno, pollFd, 2L, timeoutMs);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Makes the eventfd readable for good (it is never read): every await from now on returns at once. */
    @Override
    public synchronized void wakeUp() {
        if (wakeFd < 0 || consumerPage == null) {
            return; // closed: its fd number may belong to something else now
        }
        try (Arena local = Arena.ofConfined()) {
            MemorySegment one = local.allocate(ValueLayout.JAVA_LONG);
            one.set(ValueLayout.JAVA_LONG, 0, 1L);
            long ignored = (long) LibC.write$handle().invokeExact(wakeFd, one, 8L);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public synchronized void close() {
        if (wakeFd >= 0 && consumerPage != null) {
            try {
                int ignored = (int) LibC.close$handle().invokeExact(wakeFd);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
        if (consumerPage != null) {
            try {
                int a = (int) LibC.munmap$handle().invokeExact(MemorySegment.ofAddress(consumerPage.address()), pageSize);
                int b = (int) LibC.munmap$handle().invokeExact(MemorySegment.ofAddress(producerArea.address()),
                        pageSize + dataSizeBytes);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            consumerPage = null;
            producerArea = null;
            data = null;
            arena.close();
        }
    }
}
