package dev.infertop.json;

import dev.infertop.model.Other;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.Interferer;
import dev.infertop.model.ProbeCostEstimate;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;

/** The sched layer's part of a JSON line (man/infertop.1 documents each field). Times in ns, exact. */
final class SchedJson {
    private SchedJson() {}

    static void put(ObjectNode node, Snapshot s, SchedTotals sched, long spanNs) {
        long records = sched.offRecords() + sched.culpritRecords();
        node.put(JsonSchema.SchedField.RECORDS.key(), records);
        node.put(JsonSchema.SchedField.RECORDS_PER_S.key(), spanNs <= 0 ? 0.0 : Math.round(records * 1e9 / spanNs * 10) / 10.0);
        node.put(JsonSchema.SchedField.KERNEL_HITS.key(), sched.kernelHits());
        node.put(JsonSchema.SchedField.EST_COST_CORE_FRACTION.key(), spanNs <= 0 ? 0.0
                : Math.round(ProbeCostEstimate.schedNs(sched, s.budget().hitCost()) / spanNs * 1e5) / 1e5);
        node.put(JsonSchema.SchedField.RUNNING_NS.key(), sched.runningNs());
        node.put(JsonSchema.SchedField.RUNNABLE_NS.key(), sched.runnableNs());
        node.put(JsonSchema.SchedField.SLEEPING_NS.key(), sched.sleepingNs());
        ObjectNode threads = node.putObject(JsonSchema.SchedField.THREADS.key());
        for (SchedThreadTotals thread : sched.threads()) {
            ObjectNode t = threads.putObject(Other.tid(thread.tid()));
            t.put(JsonSchema.SchedThreadField.RUNNING_NS.key(), thread.runningNs());
            t.put(JsonSchema.SchedThreadField.RUNNABLE_NS.key(), thread.runnableNs());
            t.put(JsonSchema.SchedThreadField.SLEEPING_NS.key(), thread.sleepingNs());
            t.put(JsonSchema.SchedThreadField.SWITCHES.key(), thread.switches());
            t.put(JsonSchema.SchedThreadField.PREEMPTIONS.key(), thread.preemptions());
        }
        ObjectNode ops = node.putObject(JsonSchema.SchedField.OPS.key());
        for (SchedOpTotals op : sched.ops()) {
            ObjectNode o = ops.putObject(op.op());
            o.put(JsonSchema.SchedOpField.RUNNABLE_NS.key(), op.runnableNs());
            o.put(JsonSchema.SchedOpField.SLEEPING_NS.key(), op.sleepingNs());
        }
        ArrayNode interferers = node.putArray(JsonSchema.SchedField.INTERFERERS.key());
        for (Interferer culprit : sched.interferers()) {
            ObjectNode c = interferers.addObject();
            c.put(JsonSchema.InterfererField.PID.key(), culprit.pid());
            c.put(JsonSchema.InterfererField.COMM.key(), culprit.comm());
            c.put(JsonSchema.InterfererField.NS.key(), culprit.ns());
            c.put(JsonSchema.InterfererField.WAIT_SHARE.key(), Math.round(sched.waitShare(culprit) * 1e4) / 1e4);
            c.put(JsonSchema.InterfererField.SAME_PROCESS.key(), culprit.sameProcess());
        }
        // Every other task's time (past the listed ones, or past the table's cap): the listed and this add up.
        node.put(JsonSchema.SchedField.INTERFERERS_OTHER_NS.key(), sched.otherInterferersNs());
    }
}
