package dev.infertop.model;

/**
 * The key a capped table counts everything past its cap under (and what it forgot, such as threads that
 * exited), so that its keys still add up to its total: one spelling in every output (JSON keys, Prometheus
 * label values, views). See {@link Limits}.
 */
public final class Other {
    private Other() {}

    /** The key, as an op, a backend, a tensor group, a thread or an expert label. */
    public static final String NAME = "other";

    /** The thread id the "other" row of a per-thread list carries (no thread has it). */
    public static final int TID = -1;

    /** A thread's key in JSON and labels: its id, or {@link #NAME} for the "other" row. */
    public static String tid(int tid) {
        return tid == TID ? NAME : Integer.toString(tid);
    }
}
