package dev.infertop.snapshot;

import dev.infertop.model.Layer;
import dev.infertop.model.Other;
import dev.infertop.model.JsonSchema;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.PrintStream;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * The report's thread-states and counters parts, from summary.json's {@code sched} and {@code counters}
 * objects (the --json output's, see infertop(1)): per thread the shares of running / runnable / sleeping, the
 * top interferers, and per op IPC, refills per 1k instructions and the verdict. A layer that was off (or could
 * not count) is {@code "recorded": false} with the reason, never zeros.
 */
final class DeepLayerReport {
    static final String NOT_RECORDED = "not recorded in this run";

    private DeepLayerReport() {}

    /** The layer's state and reason from summary.json's layers object; "recorded" when it was on (or partly). */
    private static boolean recorded(JsonNode summary, String layer, ObjectNode node) {
        JsonNode status = summary.path(JsonSchema.LAYERS.key()).path(layer);
        String state = status.path(JsonSchema.LayerField.STATE.key()).asText("off");
        boolean on = state.equals("on") || state.equals("partial");
        node.put("recorded", on);
        String reason = status.path(JsonSchema.LayerField.REASON.key()).asText("");
        if (!on) {
            node.put("reason", state.equals("off") || reason.isEmpty() ? NOT_RECORDED + " (" + layer + " layer "
                    + state + ")" : reason);
        } else if (!reason.isEmpty()) {
            node.put("status", reason);
        }
        return on;
    }

    static void putSched(ObjectNode root, JsonNode summary) {
        ObjectNode node = root.putObject(JsonSchema.SCHED.key());
        JsonNode sched = summary.path(JsonSchema.SCHED.key());
        if (!recorded(summary, Layer.SCHED.id(), node)) {
            return;
        }
        node.put(JsonSchema.SchedField.RUNNING_NS.key(), sched.path(JsonSchema.SchedField.RUNNING_NS.key()).asLong());
        node.put(JsonSchema.SchedField.RUNNABLE_NS.key(), sched.path(JsonSchema.SchedField.RUNNABLE_NS.key()).asLong());
        node.put(JsonSchema.SchedField.SLEEPING_NS.key(), sched.path(JsonSchema.SchedField.SLEEPING_NS.key()).asLong());
        ObjectNode threads = node.putObject(JsonSchema.SchedField.THREADS.key());
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path(JsonSchema.SchedField.THREADS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            long running = t.path(JsonSchema.SchedThreadField.RUNNING_NS.key()).asLong();
            long runnable = t.path(JsonSchema.SchedThreadField.RUNNABLE_NS.key()).asLong();
            long sleeping = t.path(JsonSchema.SchedThreadField.SLEEPING_NS.key()).asLong();
            long total = running + runnable + sleeping;
            ObjectNode thread = threads.putObject(entry.getKey());
            thread.put(JsonSchema.SchedThreadField.RUNNING_NS.key(), running);
            thread.put(JsonSchema.SchedThreadField.RUNNABLE_NS.key(), runnable);
            thread.put(JsonSchema.SchedThreadField.SLEEPING_NS.key(), sleeping);
            thread.put("running_share", share(running, total));
            thread.put("runnable_share", share(runnable, total));
            thread.put("sleeping_share", share(sleeping, total));
            thread.put(JsonSchema.SchedThreadField.SWITCHES.key(), t.path(JsonSchema.SchedThreadField.SWITCHES.key()).asLong());
            thread.put(JsonSchema.SchedThreadField.PREEMPTIONS.key(), t.path(JsonSchema.SchedThreadField.PREEMPTIONS.key()).asLong());
        }
        node.set(JsonSchema.SchedField.INTERFERERS.key(), sched.path(JsonSchema.SchedField.INTERFERERS.key()).deepCopy());
        node.put(JsonSchema.SchedField.INTERFERERS_OTHER_NS.key(), sched.path(JsonSchema.SchedField.INTERFERERS_OTHER_NS.key()).asLong());
    }

    static void putCounters(ObjectNode root, JsonNode summary) {
        ObjectNode node = root.putObject(JsonSchema.COUNTERS.key());
        JsonNode counters = summary.path(JsonSchema.COUNTERS.key());
        if (!recorded(summary, Layer.COUNTERS.id(), node)) {
            return;
        }
        if (!counters.has(JsonSchema.CountersField.SET.key())) {
            node.put("recorded", false);
            node.put("reason", counters.path(JsonSchema.CountersField.STATUS.key()).asText("no counter could be opened"));
            return;
        }
        node.put(JsonSchema.CountersField.SET.key(), counters.path(JsonSchema.CountersField.SET.key()).asText());
        node.set(JsonSchema.CountersField.EVENTS.key(), counters.path(JsonSchema.CountersField.EVENTS.key()).deepCopy());
        if (counters.has(JsonSchema.CountersField.REFILL_BYTES_PER_S.key())) {
            node.put(JsonSchema.CountersField.REFILL_BYTES_PER_S.key(), counters.path(JsonSchema.CountersField.REFILL_BYTES_PER_S.key()).asLong());
        }
        ObjectNode ops = node.putObject(JsonSchema.CountersField.OPS.key());
        for (Iterator<Map.Entry<String, JsonNode>> it = counters.path(JsonSchema.CountersField.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode o = entry.getValue();
            ObjectNode op = ops.putObject(entry.getKey());
            op.put(JsonSchema.CounterOpField.GROUPS.key(), o.path(JsonSchema.CounterOpField.GROUPS.key()).asLong());
            for (String field : new String[] {"ipc", "refills_per_1k_instructions", "refill_bytes_per_s"}) {
                if (o.has(field)) {
                    op.set(field, o.path(field).deepCopy());
                }
            }
            op.put(JsonSchema.CounterOpField.VERDICT.key(), o.path(JsonSchema.CounterOpField.VERDICT.key()).asText());
            op.set(JsonSchema.CounterOpField.VALUES.key(), o.path(JsonSchema.CounterOpField.VALUES.key()).deepCopy());
        }
    }

    static void printSched(JsonNode report, PrintStream out) {
        JsonNode sched = report.path(JsonSchema.SCHED.key());
        out.println();
        out.println("Thread states (runnable = waiting for a CPU)");
        if (!sched.path("recorded").asBoolean()) {
            out.println("  " + sched.path("reason").asText(NOT_RECORDED));
            return;
        }
        out.printf(Locale.ROOT, "  %-8s %10s %9s %11s %9s %10s %9s %9s%n", "TID", "RUN ms", "RUN", "RUNNABLE ms",
                "RUNNABLE", "SLEEP ms", "SLEEP", "SWITCHES");
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path(JsonSchema.SchedField.THREADS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            out.printf(Locale.ROOT, "  %-8s %10.3f %8.1f%% %11.3f %8.1f%% %10.3f %8.1f%% %9d%n", entry.getKey(),
                    t.path(JsonSchema.SchedThreadField.RUNNING_NS.key()).asLong() / 1e6, 100 * t.path("running_share").asDouble(),
                    t.path(JsonSchema.SchedThreadField.RUNNABLE_NS.key()).asLong() / 1e6, 100 * t.path("runnable_share").asDouble(),
                    t.path(JsonSchema.SchedThreadField.SLEEPING_NS.key()).asLong() / 1e6, 100 * t.path("sleeping_share").asDouble(),
                    t.path(JsonSchema.SchedThreadField.SWITCHES.key()).asLong());
        }
        if (sched.path(JsonSchema.SchedField.INTERFERERS.key()).isEmpty()) {
            out.println("  no task ran on a CPU while a traced thread waited for it");
            return;
        }
        out.println("  Top interferers (ran on a CPU while a traced thread waited for it)");
        for (JsonNode c : sched.path(JsonSchema.SchedField.INTERFERERS.key())) {
            out.printf(Locale.ROOT, "  %-8d %-16s %10.3f ms %6.1f%% of the wait%s%n", c.path(JsonSchema.InterfererField.PID.key()).asInt(),
                    c.path(JsonSchema.InterfererField.COMM.key()).asText(), c.path(JsonSchema.InterfererField.NS.key()).asLong() / 1e6, 100 * c.path(JsonSchema.InterfererField.WAIT_SHARE.key()).asDouble(),
                    c.path(JsonSchema.InterfererField.SAME_PROCESS.key()).asBoolean() ? " (the target's own thread)" : "");
        }
        long otherNs = sched.path(JsonSchema.SchedField.INTERFERERS_OTHER_NS.key()).asLong();
        if (otherNs > 0) {
            out.printf(Locale.ROOT, "  %-8s %-16s %10.3f ms (every other task)%n", Other.NAME, "",
                    otherNs / 1e6);
        }
    }

    static void printCounters(JsonNode report, PrintStream out) {
        JsonNode counters = report.path(JsonSchema.COUNTERS.key());
        out.println();
        out.println("Counters per op type");
        if (!counters.path("recorded").asBoolean()) {
            out.println("  " + counters.path("reason").asText(NOT_RECORDED));
            return;
        }
        out.println("  set " + counters.path(JsonSchema.CountersField.SET.key()).asText() + ": " + String.join(", ",
                java.util.stream.StreamSupport.stream(counters.path(JsonSchema.CountersField.EVENTS.key()).spliterator(), false)
                        .map(JsonNode::asText).toList())
                + (counters.has(JsonSchema.CountersField.REFILL_BYTES_PER_S.key())
                        ? String.format(Locale.ROOT, ", L3 refills %.1f MB/s", counters.path(JsonSchema.CountersField.REFILL_BYTES_PER_S.key()).asLong() / 1e6)
                        : ""));
        out.printf(Locale.ROOT, "  %-28s %9s %7s %9s %s%n", "OP", "GROUPS", "IPC", "REF/1kI", "VERDICT");
        for (Iterator<Map.Entry<String, JsonNode>> it = counters.path(JsonSchema.CountersField.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            out.printf(Locale.ROOT, "  %-28s %9d %7s %9s %s%n",
                    entry.getKey().length() > 28 ? entry.getKey().substring(0, 28) : entry.getKey(),
                    op.path(JsonSchema.CounterOpField.GROUPS.key()).asLong(), figure(op, JsonSchema.CounterOpField.IPC), figure(op, JsonSchema.CounterOpField.REFILLS_PER_1K_INSTRUCTIONS),
                    op.path(JsonSchema.CounterOpField.VERDICT.key()).asText());
        }
    }

    private static String figure(JsonNode op, JsonSchema.CounterOpField field) {
        return op.has(field.key()) ? String.format(Locale.ROOT, "%.3f", op.path(field.key()).asDouble()) : "-";
    }

    private static double share(long part, long total) {
        return total <= 0 ? 0.0 : Math.round((double) part / total * 1e4) / 1e4;
    }
}
