package dev.infertop.snapshot;

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
        JsonNode status = summary.path("layers").path(layer);
        String state = status.path("state").asText("off");
        boolean on = state.equals("on") || state.equals("partial");
        node.put("recorded", on);
        String reason = status.path("reason").asText("");
        if (!on) {
            node.put("reason", state.equals("off") || reason.isEmpty() ? NOT_RECORDED + " (" + layer + " layer "
                    + state + ")" : reason);
        } else if (!reason.isEmpty()) {
            node.put("status", reason);
        }
        return on;
    }

    static void putSched(ObjectNode root, JsonNode summary) {
        ObjectNode node = root.putObject("sched");
        JsonNode sched = summary.path("sched");
        if (!recorded(summary, "sched", node)) {
            return;
        }
        node.put("running_ns", sched.path("running_ns").asLong());
        node.put("runnable_ns", sched.path("runnable_ns").asLong());
        node.put("sleeping_ns", sched.path("sleeping_ns").asLong());
        ObjectNode threads = node.putObject("threads");
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path("threads").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            long running = t.path("running_ns").asLong();
            long runnable = t.path("runnable_ns").asLong();
            long sleeping = t.path("sleeping_ns").asLong();
            long total = running + runnable + sleeping;
            ObjectNode thread = threads.putObject(entry.getKey());
            thread.put("running_ns", running);
            thread.put("runnable_ns", runnable);
            thread.put("sleeping_ns", sleeping);
            thread.put("running_share", share(running, total));
            thread.put("runnable_share", share(runnable, total));
            thread.put("sleeping_share", share(sleeping, total));
            thread.put("switches", t.path("switches").asLong());
            thread.put("preemptions", t.path("preemptions").asLong());
        }
        node.set("interferers", sched.path("interferers").deepCopy());
        node.put("interferers_other_ns", sched.path("interferers_other_ns").asLong());
    }

    static void putCounters(ObjectNode root, JsonNode summary) {
        ObjectNode node = root.putObject("counters");
        JsonNode counters = summary.path("counters");
        if (!recorded(summary, "counters", node)) {
            return;
        }
        if (!counters.has("set")) {
            node.put("recorded", false);
            node.put("reason", counters.path("status").asText("no counter could be opened"));
            return;
        }
        node.put("set", counters.path("set").asText());
        node.set("events", counters.path("events").deepCopy());
        if (counters.has("refill_bytes_per_s")) {
            node.put("refill_bytes_per_s", counters.path("refill_bytes_per_s").asLong());
        }
        ObjectNode ops = node.putObject("ops");
        for (Iterator<Map.Entry<String, JsonNode>> it = counters.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode o = entry.getValue();
            ObjectNode op = ops.putObject(entry.getKey());
            op.put("groups", o.path("groups").asLong());
            for (String field : new String[] {"ipc", "refills_per_1k_instructions", "refill_bytes_per_s"}) {
                if (o.has(field)) {
                    op.set(field, o.path(field).deepCopy());
                }
            }
            op.put("verdict", o.path("verdict").asText());
            op.set("values", o.path("values").deepCopy());
        }
    }

    static void printSched(JsonNode report, PrintStream out) {
        JsonNode sched = report.path("sched");
        out.println();
        out.println("Thread states (runnable = waiting for a CPU)");
        if (!sched.path("recorded").asBoolean()) {
            out.println("  " + sched.path("reason").asText(NOT_RECORDED));
            return;
        }
        out.printf(Locale.ROOT, "  %-8s %10s %9s %11s %9s %10s %9s %9s%n", "TID", "RUN ms", "RUN", "RUNNABLE ms",
                "RUNNABLE", "SLEEP ms", "SLEEP", "SWITCHES");
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path("threads").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            out.printf(Locale.ROOT, "  %-8s %10.3f %8.1f%% %11.3f %8.1f%% %10.3f %8.1f%% %9d%n", entry.getKey(),
                    t.path("running_ns").asLong() / 1e6, 100 * t.path("running_share").asDouble(),
                    t.path("runnable_ns").asLong() / 1e6, 100 * t.path("runnable_share").asDouble(),
                    t.path("sleeping_ns").asLong() / 1e6, 100 * t.path("sleeping_share").asDouble(),
                    t.path("switches").asLong());
        }
        if (sched.path("interferers").isEmpty()) {
            out.println("  no task ran on a CPU while a traced thread waited for it");
            return;
        }
        out.println("  Top interferers (ran on a CPU while a traced thread waited for it)");
        for (JsonNode c : sched.path("interferers")) {
            out.printf(Locale.ROOT, "  %-8d %-16s %10.3f ms %6.1f%% of the wait%s%n", c.path("pid").asInt(),
                    c.path("comm").asText(), c.path("ns").asLong() / 1e6, 100 * c.path("wait_share").asDouble(),
                    c.path("same_process").asBoolean() ? " (the target's own thread)" : "");
        }
        long otherNs = sched.path("interferers_other_ns").asLong();
        if (otherNs > 0) {
            out.printf(Locale.ROOT, "  %-8s %-16s %10.3f ms (every other task)%n", dev.infertop.model.Other.NAME, "",
                    otherNs / 1e6);
        }
    }

    static void printCounters(JsonNode report, PrintStream out) {
        JsonNode counters = report.path("counters");
        out.println();
        out.println("Counters per op type");
        if (!counters.path("recorded").asBoolean()) {
            out.println("  " + counters.path("reason").asText(NOT_RECORDED));
            return;
        }
        out.println("  set " + counters.path("set").asText() + ": " + String.join(", ",
                java.util.stream.StreamSupport.stream(counters.path("events").spliterator(), false)
                        .map(JsonNode::asText).toList())
                + (counters.has("refill_bytes_per_s")
                        ? String.format(Locale.ROOT, ", L3 refills %.1f MB/s", counters.path("refill_bytes_per_s").asLong() / 1e6)
                        : ""));
        out.printf(Locale.ROOT, "  %-28s %9s %7s %9s %s%n", "OP", "GROUPS", "IPC", "REF/1kI", "VERDICT");
        for (Iterator<Map.Entry<String, JsonNode>> it = counters.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            out.printf(Locale.ROOT, "  %-28s %9d %7s %9s %s%n",
                    entry.getKey().length() > 28 ? entry.getKey().substring(0, 28) : entry.getKey(),
                    op.path("groups").asLong(), figure(op, "ipc"), figure(op, "refills_per_1k_instructions"),
                    op.path("verdict").asText());
        }
    }

    private static String figure(JsonNode op, String field) {
        return op.has(field) ? String.format(Locale.ROOT, "%.3f", op.path(field).asDouble()) : "-";
    }

    private static double share(long part, long total) {
        return total <= 0 ? 0.0 : Math.round((double) part / total * 1e4) / 1e4;
    }
}
