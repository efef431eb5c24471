package dev.infertop.view;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.CounterFigures;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpCounters;
import dev.infertop.model.ProbeCostEstimate;
import dev.infertop.model.Snapshot;

/** The counters layer's part of a JSON Lines object ("counters"), present unless the layer is off. */
final class CountersJson {
    private CountersJson() {}

    static void put(ObjectNode root, Snapshot s) {
        LayerStatus status = s.layers().stream().filter(l -> l.layer() == Layer.COUNTERS).findFirst().orElse(null);
        if (status == null || status.state() == LayerStatus.State.OFF) {
            return;
        }
        CounterTotals c = s.shown().counters();
        long spanNs = s.shown().spanNs();
        ObjectNode node = root.putObject(JsonSchema.COUNTERS.key());
        node.put("state", status.state().label());
        if (!status.reason().isEmpty()) {
            node.put("status", status.reason());
        }
        ObjectNode thresholds = node.putObject("thresholds");
        thresholds.put("memory_bound_refills_per_1k_instructions",
                CounterFigures.MEMORY_BOUND_REFILLS_PER_KILO_INSTRUCTION);
        thresholds.put("compute_bound_ipc", CounterFigures.COMPUTE_BOUND_IPC);
        if (c.isEmpty()) {
            return;
        }
        node.put("set", c.setName());
        var events = node.putArray("events");
        c.events().forEach(events::add);
        node.put("line_bytes", c.lineBytes());
        ObjectNode roles = node.putObject("roles");
        putRole(roles, "refills", c, c.refillsIndex());
        putRole(roles, "instructions", c, c.instructionsIndex());
        putRole(roles, "cycles", c, c.cyclesIndex());
        node.put("groups", c.countedGroups());
        node.put("migrated_groups", c.migratedGroups());
        node.put("switched_groups", c.switchedGroups());
        node.put("failed_reads", c.failedReads());
        node.put("counted_ms", round(c.countedNs() / 1e6, 3));
        putValues(node.putObject("values"), c, c.values());
        String silentNotice = c.silentNotice();
        if (!silentNotice.isEmpty()) {
            var silent = node.putArray("silent_events");
            c.silentEvents().forEach(silent::add);
            node.put("silent_notice", silentNotice);
        }
        if (c.refillsIndex() >= 0) {
            node.put("refill_bytes_per_s", Math.round(c.refillBytesPerSecond(spanNs)));
        }
        node.put("est_cost_cpu_fraction", round(spanNs <= 0 ? 0 : ProbeCostEstimate.counterReadsNs(c) / spanNs, 5));
        ObjectNode ops = node.putObject("ops");
        for (OpCounters op : c.ops()) {
            ObjectNode o = ops.putObject(op.op());
            o.put("groups", op.groups());
            o.put("migrated_groups", op.migratedGroups());
            o.put("switched_groups", op.switchedGroups());
            o.put("counted_ms", round(op.countedNs() / 1e6, 3));
            o.put("wall_ms", round(op.wallNs() / 1e6, 3));
            putValues(o.putObject("values"), c, op.values());
            double ipc = c.ipc(op);
            double rpki = c.refillsPerKiloInstruction(op);
            if (!Double.isNaN(ipc)) {
                o.put("ipc", round(ipc, 3));
            }
            if (!Double.isNaN(rpki)) {
                o.put("refills_per_1k_instructions", round(rpki, 3));
            }
            if (c.refillsIndex() >= 0) {
                o.put("refill_bytes_per_s", Math.round(c.refillBytesPerSecond(op)));
            }
            o.put("verdict", c.verdict(op).label());
        }
    }

    private static void putValues(ObjectNode node, CounterTotals c, java.util.List<Long> values) {
        for (int e = 0; e < c.events().size() && e < values.size(); e++) {
            node.put(c.events().get(e), values.get(e));
        }
    }

    /** Which event plays a role in the derived figures (absent: the set has none), for readers such as replay. */
    private static void putRole(ObjectNode roles, String role, CounterTotals c, int index) {
        if (index >= 0 && index < c.events().size()) {
            roles.put(role, c.events().get(index));
        }
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
