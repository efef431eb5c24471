package dev.infertop.diff;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The diff as one JSON object (man/infertop-diff.1 lists the fields): the two sources, what differs, the token
 * changes, per op type the change of time per generated token with its test and the figures beside it (sorted as
 * the text), the time outside the ops and the total, MoE expert shares, and the regressions beyond --fail-on.
 */
public final class DiffJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private DiffJson() {}

    public static ObjectNode json(RunDiff diff, Double failOnPercent) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("a", diff.a().run().path().toString());
        root.put("a_source", diff.a().run().source());
        root.put("b", diff.b().run().path().toString());
        root.put("b_source", diff.b().run().source());
        ArrayNode runsA = root.putArray("a_runs");
        diff.runsA().forEach(r -> runsA.add(r.run().path().toString()));
        ArrayNode runsB = root.putArray("b_runs");
        diff.runsB().forEach(r -> runsB.add(r.run().path().toString()));
        root.put("test", "mann-whitney-u over " + diff.sampleUnit() + ", holm-adjusted");
        root.put("alpha", Change.ALPHA);
        root.put("large_percent", diff.largePercent());
        ArrayNode differs = root.putArray("differs");
        for (Identity.Property property : diff.identity().differs()) {
            differs.addObject().put("name", property.name()).put("a", property.a()).put("b", property.b());
        }
        ArrayNode same = root.putArray("same");
        diff.identity().same().forEach(p -> same.add(p.name()));
        ArrayNode notes = root.putArray("notes");
        diff.identity().notes().forEach(notes::add);
        ArrayNode rates = root.putArray("tokens");
        diff.rates().forEach(rate -> rates.add(change(rate, diff)));
        ArrayNode ops = root.putArray("ops");
        for (RunDiff.OpChange op : diff.ops()) {
            ObjectNode node = change(op.time(), diff);
            node.put("op", op.op());
            node.remove("name");
            putOp(node.putObject("a_figures"), op.a());
            putOp(node.putObject("b_figures"), op.b());
            ops.add(node);
        }
        root.set("outside_ops", change(diff.outside(), diff));
        root.set("total", change(diff.total(), diff));
        ArrayNode experts = root.putArray("experts");
        diff.experts().forEach(e -> experts.add(change(e, diff)));
        root.put("tested", diff.testedCount());
        root.put("significant", diff.significantCount());
        root.put("large_undecided", diff.count(Change.Evidence.LARGE_UNDECIDED));
        root.put("too_few", diff.count(Change.Evidence.TOO_FEW));
        if (failOnPercent != null) {
            Gate gate = Gate.of(diff, failOnPercent);
            root.put("fail_on_percent", failOnPercent);
            root.put("gate", gate.verdict().words());
            ArrayNode regressions = root.putArray("regressions");
            gate.regressions().forEach(r -> regressions.add(r.name()));
            ArrayNode undecided = root.putArray("undecided");
            for (Gate.Undecided u : gate.undecided()) {
                undecided.addObject().put("name", u.change().name())
                        .put("reason", u.tooFew() ? "too few samples" : "large but undecided");
            }
            if (!gate.advice().isEmpty()) {
                root.put("decide", gate.advice());
            }
        }
        return root;
    }

    static ObjectNode change(Change change, RunDiff diff) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("name", change.name());
        node.put("unit", change.unit());
        putNumber(node, "a", change.a());
        putNumber(node, "b", change.b());
        putNumber(node, "change", change.delta());
        putNumber(node, "change_percent", change.deltaPercent());
        if (change.tested()) {
            node.put("p", change.p());
            node.put("p_adjusted", change.pAdjusted());
            node.put("significant", change.significant());
            node.put("p_floor", change.pFloor());
            node.put("evidence", change.evidence(diff.largePercent()).words());
            node.put(diff.sampleUnit() + "_a", change.samplesA());
            node.put(diff.sampleUnit() + "_b", change.samplesB());
        } else {
            node.putNull("p");
            node.putNull("significant");
        }
        return node;
    }

    private static void putOp(ObjectNode node, RunMetrics.Op op) {
        if (op == null) {
            node.put("present", false);
            return;
        }
        node.put("present", true);
        putNumber(node, "calls_per_token", op.callsPerToken());
        putNumber(node, "ms_per_token", op.msPerToken());
        putNumber(node, "share", op.share());
        putNumber(node, "p50_ms", op.p50Ms());
        putNumber(node, "p99_ms", op.p99Ms());
        putNumber(node, "barrier_wait_ms_per_token", op.barrierWaitMsPerToken());
        putNumber(node, "gb_per_s", op.gbPerS());
        putNumber(node, "bytes_per_token", op.bytesPerToken());
        if (!op.verdict().isEmpty()) {
            node.put("verdict", op.verdict());
        }
    }

    /** A number, or null where there is none (JSON has no NaN). */
    private static void putNumber(ObjectNode node, String field, double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            node.putNull(field);
        } else {
            node.put(field, Math.round(value * 1e6) / 1e6);
        }
    }
}
