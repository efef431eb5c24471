package dev.infertop.agg;

import dev.infertop.model.Other;
import dev.infertop.model.Limits;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * The target's threads as the aggregators key them: one slot per thread id, shared by every layer that keeps
 * figures per thread (operator, sched), so that they agree on which threads are kept. The target chooses how
 * many threads it starts (a thread per request, per decode): at most {@link #MAX_THREADS} slots are held, a
 * thread gone from /proc/PID/task and not seen for {@link #PRUNE_AFTER_TICKS} ticks gives its slot back, and
 * anything else past the cap is counted under the {@link #OTHER} slot, where a pruned thread's figures go too,
 * so that the rows still add up to the total. Single writer: the collector thread; no allocation per lookup.
 */
public final class ThreadSlots {
    /** Threads kept at once: {@code dev.infertop.agg.graph.CpuGraph.MAX_THREADS}, the most one graph reports. */
    public static final int MAX_THREADS = 256;
    /** The slot of every thread past the cap, and of the threads pruned. */
    public static final int OTHER = MAX_THREADS;
    /**
     * Ticks a thread must go unseen before its slot may be given back (and only once /proc says it is gone):
     * a pool thread sleeping between requests is not seen either, yet lives.
     */
    public static final int PRUNE_AFTER_TICKS = 3;
    private static final int FREE = Integer.MIN_VALUE;

    /** A layer's per-thread figures: told to fold a slot into {@link #OTHER} before the slot is given back. */
    public interface Listener {
        void foldIntoOther(int slot);
    }

    private final IntPredicate gone;
    private final int[] tids = new int[MAX_THREADS];
    private final long[] lastSeenTick = new long[MAX_THREADS];
    /** Slots below this have been used (free ones among them); a lookup scans no further. */
    private int highWater;
    private int held;
    private int lastSlot = -1;
    private long tick;
    private final List<Listener> listeners = new ArrayList<>();
    private long recordsFolded;
    private long threadsPruned;

    /** Threads never pruned (tests, the warm-up): only the cap holds. */
    public ThreadSlots() {
        this(tid -> false);
    }

    /** @param gone whether a thread has exited (the session asks /proc/PID/task/TID) */
    public ThreadSlots(IntPredicate gone) {
        this.gone = gone;
        java.util.Arrays.fill(tids, FREE);
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /**
     * The slot of thread {@code tid}, taken now if it has none (and marked seen this tick); {@link #OTHER}
     * once {@link #MAX_THREADS} are held, and each such record is counted.
     */
    public int slotOf(int tid) {
        int slot = find(tid);
        if (slot < 0) {
            if (held == MAX_THREADS) {
                recordsFolded++;
                return OTHER;
            }
            slot = 0;
            while (tids[slot] != FREE) {
                slot++;
            }
            tids[slot] = tid;
            held++;
            highWater = Math.max(highWater, slot + 1);
            lastSlot = slot;
        }
        lastSeenTick[slot] = tick;
        return slot;
    }

    /** The slot of {@code tid} if it has one, else -1 (nothing taken, nothing counted). */
    public int find(int tid) {
        if (lastSlot >= 0 && tids[lastSlot] == tid) {
            return lastSlot;
        }
        for (int slot = 0; slot < highWater; slot++) {
            if (tids[slot] == tid) {
                lastSlot = slot;
                return slot;
            }
        }
        return -1;
    }

    /** The thread id in {@code slot}, {@link dev.infertop.model.Other#TID} for {@link #OTHER}. */
    public int tid(int slot) {
        return slot == OTHER ? Other.TID : tids[slot];
    }

    /** Whether {@code slot} holds a thread now. */
    public boolean held(int slot) {
        return slot >= 0 && slot < MAX_THREADS && tids[slot] != FREE;
    }

    /** One past the highest slot used: the slots to look at when listing threads. */
    public int highWater() {
        return highWater;
    }

    /**
     * Ends a tick (after every layer's snapshot of it): a thread unseen for {@link #PRUNE_AFTER_TICKS} ticks
     * and gone from the target is folded into {@link #OTHER} by every listener, and its slot given back.
     */
    public void endTick() {
        tick++;
        for (int slot = 0; slot < highWater; slot++) {
            int tid = tids[slot];
            if (tid == FREE || tick - lastSeenTick[slot] < PRUNE_AFTER_TICKS || !gone.test(tid)) {
                continue;
            }
            for (Listener listener : listeners) {
                listener.foldIntoOther(slot);
            }
            tids[slot] = FREE;
            held--;
            threadsPruned++;
            if (lastSlot == slot) {
                lastSlot = -1;
            }
        }
        while (highWater > 0 && tids[highWater - 1] == FREE) {
            highWater--;
        }
    }

    /** Threads held now. */
    public int held() {
        return held;
    }

    /** Lookups of a thread without a slot while every slot was held: counted under {@link #OTHER}. */
    public long recordsFolded() {
        return recordsFolded;
    }

    /** Threads that exited and whose figures went to {@link #OTHER}, their slots given back. */
    public long threadsPruned() {
        return threadsPruned;
    }

    /** This table in the snapshot's limits. */
    public Limits.Bound bound() {
        return Limits.Bound.of("threads", held, "threads_cap", MAX_THREADS,
                Limits.Past.capped("thread_records_folded", recordsFolded),
                Limits.Past.housekeeping("threads_pruned", threadsPruned));
    }
}
