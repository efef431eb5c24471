package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Interferer;
import dev.infertop.model.OpCounters;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * The sched and counters layers' totals back from summary.json's {@code sched} and {@code counters} objects,
 * so a replay's thread-states (t) and counters (c) panels show the summary's numbers. Times in ns are exact;
 * the counters' ms figures are the summary's (µs resolution). The summary keeps the sched layer's records as
 * one sum: they come back as off-CPU records. The bandwidth plot's history is not in a summary.
 */
final class DeepLayerSummary {
    private DeepLayerSummary() {}

    static SchedTotals sched(JsonNode summary) {
        JsonNode sched = summary.path("sched");
        if (!sched.isObject()) {
            return SchedTotals.EMPTY;
        }
        List<SchedThreadTotals> threads = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path("threads").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            OptionalInt tid = NumberKeys.tid(entry.getKey());
            if (tid.isEmpty()) {
                continue;
            }
            threads.add(new SchedThreadTotals(tid.getAsInt(), t.path("running_ns").asLong(),
                    t.path("runnable_ns").asLong(), t.path("sleeping_ns").asLong(), t.path("switches").asLong(),
                    t.path("preemptions").asLong()));
        }
        List<SchedOpTotals> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            ops.add(new SchedOpTotals(entry.getKey(), entry.getValue().path("runnable_ns").asLong(),
                    entry.getValue().path("sleeping_ns").asLong()));
        }
        List<Interferer> interferers = new ArrayList<>();
        for (JsonNode c : sched.path("interferers")) {
            interferers.add(new Interferer(c.path("pid").asInt(), c.path("comm").asText(), c.path("ns").asLong(),
                    c.path("same_process").asBoolean()));
        }
        return new SchedTotals(threads, ops, interferers, sched.path("interferers_other_ns").asLong(),
                sched.path("records").asLong(), 0, sched.path("kernel_hits").asLong());
    }

    static CounterTotals counters(JsonNode summary) {
        JsonNode c = summary.path("counters");
        if (!c.has("set")) {
            return CounterTotals.EMPTY;
        }
        List<String> events = new ArrayList<>();
        c.path("events").forEach(e -> events.add(e.asText()));
        JsonNode roles = c.path("roles");
        List<OpCounters> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode o = entry.getValue();
            ops.add(new OpCounters(entry.getKey(), o.path("groups").asLong(), o.path("migrated_groups").asLong(),
                    o.path("switched_groups").asLong(), values(events, o.path("values")), ns(o.path("counted_ms")),
                    ns(o.path("wall_ms"))));
        }
        return new CounterTotals(c.path("set").asText(), events, c.path("line_bytes").asInt(),
                events.indexOf(roles.path("refills").asText()), events.indexOf(roles.path("instructions").asText()),
                events.indexOf(roles.path("cycles").asText()), ops, values(events, c.path("values")),
                c.path("groups").asLong(), c.path("migrated_groups").asLong(), c.path("switched_groups").asLong(),
                c.path("failed_reads").asLong(), ns(c.path("counted_ms")), List.of());
    }

    private static List<Long> values(List<String> events, JsonNode node) {
        List<Long> values = new ArrayList<>();
        events.forEach(e -> values.add(node.path(e).asLong()));
        return values;
    }

    private static long ns(JsonNode ms) {
        return Math.round(ms.asDouble() * 1e6);
    }
}
