package dev.infertop.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
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
        node.put(JsonSchema.CountersField.STATE.key(), status.state().label());
        if (!status.reason().isEmpty()) {
            node.put(JsonSchema.CountersField.STATUS.key(), status.reason());
        }
        ObjectNode thresholds = node.putObject(JsonSchema.CountersField.THRESHOLDS.key());
        thresholds.put(JsonSchema.ThresholdField.MEMORY_BOUND_REFILLS_PER_1K_INSTRUCTIONS.key(),
                CounterFigures.MEMORY_BOUND_REFILLS_PER_KILO_INSTRUCTION);
        thresholds.put(JsonSchema.ThresholdField.COMPUTE_BOUND_IPC.key(), CounterFigures.COMPUTE_BOUND_IPC);
        if (c.isEmpty()) {
            return;
        }
        node.put(JsonSchema.CountersField.SET.key(), c.setName());
        var events = node.putArray(JsonSchema.CountersField.EVENTS.key());
        c.events().forEach(events::add);
        node.put(JsonSchema.CountersField.LINE_BYTES.key(), c.lineBytes());
        ObjectNode roles = node.putObject(JsonSchema.CountersField.ROLES.key());
        putRole(roles, JsonSchema.CounterRoleField.REFILLS, c, c.refillsIndex());
        putRole(roles, JsonSchema.CounterRoleField.INSTRUCTIONS, c, c.instructionsIndex());
        putRole(roles, JsonSchema.CounterRoleField.CYCLES, c, c.cyclesIndex());
        node.put(JsonSchema.CountersField.GROUPS.key(), c.countedGroups());
        node.put(JsonSchema.CountersField.MIGRATED_GROUPS.key(), c.migratedGroups());
        node.put(JsonSchema.CountersField.SWITCHED_GROUPS.key(), c.switchedGroups());
        node.put(JsonSchema.CountersField.FAILED_READS.key(), c.failedReads());
        node.put(JsonSchema.CountersField.COUNTED_MS.key(), round(c.countedNs() / 1e6, 3));
        putValues(node.putObject(JsonSchema.CountersField.VALUES.key()), c, c.values());
        String silentNotice = c.silentNotice();
        if (!silentNotice.isEmpty()) {
            var silent = node.putArray(JsonSchema.CountersField.SILENT_EVENTS.key());
            c.silentEvents().forEach(silent::add);
            node.put(JsonSchema.CountersField.SILENT_NOTICE.key(), silentNotice);
        }
        if (c.refillsIndex() >= 0) {
            node.put(JsonSchema.CountersField.REFILL_BYTES_PER_S.key(), Math.round(c.refillBytesPerSecond(spanNs)));
        }
        node.put(JsonSchema.CountersField.EST_COST_CPU_FRACTION.key(), round(spanNs <= 0 ? 0 : ProbeCostEstimate.counterReadsNs(c) / spanNs, 5));
        ObjectNode ops = node.putObject(JsonSchema.CountersField.OPS.key());
        for (OpCounters op : c.ops()) {
            ObjectNode o = ops.putObject(op.op());
            o.put(JsonSchema.CounterOpField.GROUPS.key(), op.groups());
            o.put(JsonSchema.CounterOpField.MIGRATED_GROUPS.key(), op.migratedGroups());
            o.put(JsonSchema.CounterOpField.SWITCHED_GROUPS.key(), op.switchedGroups());
            o.put(JsonSchema.CounterOpField.COUNTED_MS.key(), round(op.countedNs() / 1e6, 3));
            o.put(JsonSchema.CounterOpField.WALL_MS.key(), round(op.wallNs() / 1e6, 3));
            putValues(o.putObject(JsonSchema.CounterOpField.VALUES.key()), c, op.values());
            double ipc = c.ipc(op);
            double rpki = c.refillsPerKiloInstruction(op);
            if (!Double.isNaN(ipc)) {
                o.put(JsonSchema.CounterOpField.IPC.key(), round(ipc, 3));
            }
            if (!Double.isNaN(rpki)) {
                o.put(JsonSchema.CounterOpField.REFILLS_PER_1K_INSTRUCTIONS.key(), round(rpki, 3));
            }
            if (c.refillsIndex() >= 0) {
                o.put(JsonSchema.CounterOpField.REFILL_BYTES_PER_S.key(), Math.round(c.refillBytesPerSecond(op)));
            }
            o.put(JsonSchema.CounterOpField.VERDICT.key(), c.verdict(op).label());
        }
    }

    private static void putValues(ObjectNode node, CounterTotals c, java.util.List<Long> values) {
        for (int e = 0; e < c.events().size() && e < values.size(); e++) {
            node.put(c.events().get(e), values.get(e));
        }
    }

    /** Which event plays a role in the derived figures (absent: the set has none), for readers such as replay. */
    private static void putRole(ObjectNode roles, JsonSchema.CounterRoleField role, CounterTotals c, int index) {
        if (index >= 0 && index < c.events().size()) {
            roles.put(role.key(), c.events().get(index));
        }
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
