package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.JsonSchema;
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
        JsonNode sched = summary.path(JsonSchema.SCHED.key());
        if (!sched.isObject()) {
            return SchedTotals.EMPTY;
        }
        List<SchedThreadTotals> threads = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path(JsonSchema.SchedField.THREADS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode t = entry.getValue();
            OptionalInt tid = NumberKeys.tid(entry.getKey());
            if (tid.isEmpty()) {
                continue;
            }
            threads.add(new SchedThreadTotals(tid.getAsInt(), t.path(JsonSchema.SchedThreadField.RUNNING_NS.key()).asLong(),
                    t.path(JsonSchema.SchedThreadField.RUNNABLE_NS.key()).asLong(), t.path(JsonSchema.SchedThreadField.SLEEPING_NS.key()).asLong(), t.path(JsonSchema.SchedThreadField.SWITCHES.key()).asLong(),
                    t.path(JsonSchema.SchedThreadField.PREEMPTIONS.key()).asLong()));
        }
        List<SchedOpTotals> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = sched.path(JsonSchema.SchedField.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            ops.add(new SchedOpTotals(entry.getKey(), entry.getValue().path(JsonSchema.SchedOpField.RUNNABLE_NS.key()).asLong(),
                    entry.getValue().path(JsonSchema.SchedOpField.SLEEPING_NS.key()).asLong()));
        }
        List<Interferer> interferers = new ArrayList<>();
        for (JsonNode c : sched.path(JsonSchema.SchedField.INTERFERERS.key())) {
            interferers.add(new Interferer(c.path(JsonSchema.InterfererField.PID.key()).asInt(), c.path(JsonSchema.InterfererField.COMM.key()).asText(), c.path(JsonSchema.InterfererField.NS.key()).asLong(),
                    c.path(JsonSchema.InterfererField.SAME_PROCESS.key()).asBoolean()));
        }
        return new SchedTotals(threads, ops, interferers, sched.path(JsonSchema.SchedField.INTERFERERS_OTHER_NS.key()).asLong(),
                sched.path(JsonSchema.SchedField.RECORDS.key()).asLong(), 0, sched.path(JsonSchema.SchedField.KERNEL_HITS.key()).asLong());
    }

    static CounterTotals counters(JsonNode summary) {
        JsonNode c = summary.path(JsonSchema.COUNTERS.key());
        if (!c.has(JsonSchema.CountersField.SET.key())) {
            return CounterTotals.EMPTY;
        }
        List<String> events = new ArrayList<>();
        c.path(JsonSchema.CountersField.EVENTS.key()).forEach(e -> events.add(e.asText()));
        JsonNode roles = c.path(JsonSchema.CountersField.ROLES.key());
        List<OpCounters> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path(JsonSchema.CountersField.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode o = entry.getValue();
            ops.add(new OpCounters(entry.getKey(), o.path(JsonSchema.CounterOpField.GROUPS.key()).asLong(), o.path(JsonSchema.CounterOpField.MIGRATED_GROUPS.key()).asLong(),
                    o.path(JsonSchema.CounterOpField.SWITCHED_GROUPS.key()).asLong(), values(events, o.path(JsonSchema.CounterOpField.VALUES.key())), ns(o.path(JsonSchema.CounterOpField.COUNTED_MS.key())),
                    ns(o.path(JsonSchema.CounterOpField.WALL_MS.key()))));
        }
        return new CounterTotals(c.path(JsonSchema.CountersField.SET.key()).asText(), events, c.path(JsonSchema.CountersField.LINE_BYTES.key()).asInt(),
                events.indexOf(roles.path(JsonSchema.CounterRoleField.REFILLS.key()).asText()), events.indexOf(roles.path(JsonSchema.CounterRoleField.INSTRUCTIONS.key()).asText()),
                events.indexOf(roles.path(JsonSchema.CounterRoleField.CYCLES.key()).asText()), ops, values(events, c.path(JsonSchema.CountersField.VALUES.key())),
                c.path(JsonSchema.CountersField.GROUPS.key()).asLong(), c.path(JsonSchema.CountersField.MIGRATED_GROUPS.key()).asLong(), c.path(JsonSchema.CountersField.SWITCHED_GROUPS.key()).asLong(),
                c.path(JsonSchema.CountersField.FAILED_READS.key()).asLong(), ns(c.path(JsonSchema.CountersField.COUNTED_MS.key())), List.of());
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
