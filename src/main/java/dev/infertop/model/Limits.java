package dev.infertop.model;

import java.util.ArrayList;
import java.util.List;

/**
 * What the collector kept of what the target (or another process) chose, and what went past its bounds: the
 * target names its tensors and layers, chooses its backends' GUIDs, its op ids, its threads; other processes
 * choose their pids. Every table keyed by such a choice is capped; each is one {@link Bound} here, listed once,
 * and the JSON {@code limits} object, the man page and the header's "capped N" all read this list. Counts are
 * of the run so far; the capped ones are zero in any real run.
 *
 * @param bounds in the order the JSON writes them
 */
public record Limits(List<Bound> bounds) {
    /** Nothing known (a replayed snapshot, a test). */
    public static final Limits NONE = new Limits(List.of());

    public Limits {
        bounds = List.copyOf(bounds);
    }

    /**
     * One capped table.
     *
     * @param keptField the JSON name of how many keys it holds now, or null where it holds none of its own
     * @param kept      how many keys it holds now
     * @param capField  the JSON name of its cap
     * @param cap       the most keys it holds
     * @param past      what went past the cap (or was pruned), each with its JSON name
     */
    public record Bound(String keptField, long kept, String capField, long cap, List<Past> past) {
        public Bound {
            past = List.copyOf(past);
        }

        /** A table that keeps {@code kept} of {@code cap} keys. */
        public static Bound of(String keptField, long kept, String capField, long cap, Past... past) {
            return new Bound(keptField, kept, capField, cap, List.of(past));
        }
    }

    /**
     * One count of what a table did not keep under its own key.
     *
     * @param capped whether it counts what the cap turned away (the header's "capped N"), not housekeeping such
     *               as forgetting a thread that exited
     */
    public record Past(String field, long count, boolean capped) {
        public static Past capped(String field, long count) {
            return new Past(field, count, true);
        }

        public static Past housekeeping(String field, long count) {
            return new Past(field, count, false);
        }
    }

    /** Everything turned away by a cap (dropped or folded into "other"), for a one-word warning. */
    public long droppedTotal() {
        long sum = 0;
        for (Bound bound : bounds) {
            for (Past past : bound.past()) {
                if (past.capped()) {
                    sum += past.count();
                }
            }
        }
        return sum;
    }

    /** The figure named {@code field} in the JSON (a kept count, a cap or a past count); -1 when there is none. */
    public long value(String field) {
        for (Bound bound : bounds) {
            if (field.equals(bound.keptField())) {
                return bound.kept();
            }
            if (field.equals(bound.capField())) {
                return bound.cap();
            }
            for (Past past : bound.past()) {
                if (field.equals(past.field())) {
                    return past.count();
                }
            }
        }
        return -1;
    }

    /** Every JSON field name, in order (the man page documents each). */
    public List<String> fields() {
        List<String> fields = new ArrayList<>();
        for (Bound bound : bounds) {
            if (bound.keptField() != null) {
                fields.add(bound.keptField());
            }
            fields.add(bound.capField());
            bound.past().forEach(p -> fields.add(p.field()));
        }
        return fields;
    }
}
