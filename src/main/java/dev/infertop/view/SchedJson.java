package dev.infertop.view;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
        node.put("records", records);
        node.put("records_per_s", spanNs <= 0 ? 0.0 : Math.round(records * 1e9 / spanNs * 10) / 10.0);
        node.put("kernel_hits", sched.kernelHits());
        node.put("est_cost_core_fraction", spanNs <= 0 ? 0.0
                : Math.round(ProbeCostEstimate.schedNs(sched, s.budget().hitCost()) / spanNs * 1e5) / 1e5);
        node.put("running_ns", sched.runningNs());
        node.put("runnable_ns", sched.runnableNs());
        node.put("sleeping_ns", sched.sleepingNs());
        ObjectNode threads = node.putObject("threads");
        for (SchedThreadTotals thread : sched.threads()) {
            ObjectNode t = threads.putObject(dev.infertop.model.Other.tid(thread.tid()));
            t.put("running_ns", thread.runningNs());
            t.put("runnable_ns", thread.runnableNs());
            t.put("sleeping_ns", thread.sleepingNs());
            t.put("switches", thread.switches());
            t.put("preemptions", thread.preemptions());
        }
        ObjectNode ops = node.putObject("ops");
        for (SchedOpTotals op : sched.ops()) {
            ObjectNode o = ops.putObject(op.op());
            o.put("runnable_ns", op.runnableNs());
            o.put("sleeping_ns", op.sleepingNs());
        }
        ArrayNode interferers = node.putArray("interferers");
        for (Interferer culprit : sched.interferers()) {
            ObjectNode c = interferers.addObject();
            c.put("pid", culprit.pid());
            c.put("comm", culprit.comm());
            c.put("ns", culprit.ns());
            c.put("wait_share", Math.round(sched.waitShare(culprit) * 1e4) / 1e4);
            c.put("same_process", culprit.sameProcess());
        }
        // Every other task's time (past the listed ones, or past the table's cap): the listed and this add up.
        node.put("interferers_other_ns", sched.otherInterferersNs());
    }
}
