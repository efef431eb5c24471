package dev.infertop.diff;

import dev.infertop.model.JsonSchema;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Two runs compared: what differs between them (model, build, threads, layers), the token rates and latencies,
 * and per op type the time per generated token with the figures beside it, biggest movers first, closed by the
 * time outside the traced ops and the total, which add up. Every change with per-interval samples on both sides is
 * rank-tested, and the p-values are adjusted together (Holm) so that a diff of two runs of the same thing calls
 * nothing significant in at least 95 % of cases, however many ops it lists.
 *
 * @param rates     decode and prefill time per token (tested), tokens/s, TTFT and TPOT percentiles, weights per
 *                  token, barrier wait per token (not tested: no per-interval samples in a snapshot)
 * @param ops       per op type, sorted by the absolute change of time per generated token
 * @param outside   time per generated token outside the traced ops (llama_decode time the ops do not cover)
 * @param total     llama_decode time per generated token: the ops and {@link #outside} add up to it
 * @param experts   per MoE expert, its share of the selections, when both runs have them
 */
public record RunDiff(RunMetrics a, RunMetrics b, Identity.Comparison identity, List<Change> rates, List<OpChange> ops,
                      Change outside, Change total, List<Change> experts) {

    /** One op type in both runs: its time per generated token (the tested change) and its other figures. */
    public record OpChange(String op, RunMetrics.Op a, RunMetrics.Op b, Change time) {}

    public static RunDiff of(RunMetrics a, RunMetrics b) throws DiffInputException {
        boolean decode = a.tokensDecode() > 0 && b.tokensDecode() > 0;
        boolean prefill = a.tokensPrefill() > 0 && b.tokensPrefill() > 0;
        if (!decode && !prefill) {
            throw new DiffInputException("nothing to compare: " + a.run().path() + " generated " + a.tokensDecode()
                    + " tokens and read " + a.tokensPrefill() + " prompt tokens, " + b.run().path() + " "
                    + b.tokensDecode() + " and " + b.tokensPrefill());
        }
        List<Change> tested = new ArrayList<>();
        List<Change> rates = new ArrayList<>();
        rates.add(Change.tested(DECODE_TIME, "ms", msPer(a.decodeBusyMs(), a.tokensDecode()),
                msPer(b.decodeBusyMs(), b.tokensDecode()), a.decodeSamples(), b.decodeSamples(), true));
        rates.add(Change.tested("prefill time per prompt token", "ms", msPer(a.prefillBusyMs(), a.tokensPrefill()),
                msPer(b.prefillBusyMs(), b.tokensPrefill()), a.prefillSamples(), b.prefillSamples(), true));
        tested.addAll(rates);
        // Ops in both runs' tables; none when either run has no op figures (its operator layer off): a missing
        // side is then unknown, not zero.
        Set<String> names = new LinkedHashSet<>();
        if (!a.ops().isEmpty() && !b.ops().isEmpty()) {
            names.addAll(a.ops().keySet());
            names.addAll(b.ops().keySet());
        }
        List<OpChange> ops = new ArrayList<>();
        for (String op : names) {
            RunMetrics.Op opA = a.ops().get(op);
            RunMetrics.Op opB = b.ops().get(op);
            Change time = Change.tested(op, "ms", opA == null ? 0 : opA.msPerToken(), opB == null ? 0 : opB.msPerToken(),
                    a.opSamples(op), b.opSamples(op), true);
            ops.add(new OpChange(op, opA, opB, time));
            tested.add(time);
        }
        double[] p = tested.stream().mapToDouble(Change::p).toArray();
        double[] adjusted = RankTest.holm(p);
        for (int i = 0; i < rates.size(); i++) {
            rates.set(i, rates.get(i).withAdjusted(adjusted[i]));
        }
        for (int i = 0; i < ops.size(); i++) {
            OpChange op = ops.get(i);
            ops.set(i, new OpChange(op.op(), op.a(), op.b(), op.time().withAdjusted(adjusted[rates.size() + i])));
        }
        ops.sort(Comparator.comparingDouble((OpChange o) -> -Math.abs(o.time().delta())).thenComparing(OpChange::op));
        rates.add(Change.untested(DECODE_RATE, "tok/s", a.decodeTokensPerSecond(), b.decodeTokensPerSecond(),
                false));
        rates.add(Change.untested("prefill tokens/s", "tok/s", a.prefillTokensPerSecond(), b.prefillTokensPerSecond(),
                false));
        for (JsonSchema field : List.of(JsonSchema.TTFT_MS, JsonSchema.TPOT_MS)) {
            for (JsonSchema.LatencyField percentile : List.of(JsonSchema.LatencyField.P50, JsonSchema.LatencyField.P99)) {
                String name = field.key().substring(0, 4).toUpperCase(Locale.ROOT) + " " + percentile.key();
                rates.add(Change.untested(name, "ms", a.latencyMs(field, percentile), b.latencyMs(field, percentile),
                        true));
            }
        }
        rates.add(Change.untested("weight bytes per decode token", "bytes", a.weightBytesPerDecodeToken(),
                b.weightBytesPerDecodeToken(), true));
        rates.add(Change.untested("barrier wait per generated token", "ms", a.barrierWaitMsPerToken(),
                b.barrierWaitMsPerToken(), true));
        double outsideA = a.msPerGeneratedToken() - (a.ops().isEmpty() ? 0 : a.opsMsPerToken());
        double outsideB = b.msPerGeneratedToken() - (b.ops().isEmpty() ? 0 : b.opsMsPerToken());
        Change outside = Change.untested("outside traced ops", "ms", outsideA, outsideB, true);
        Change total = Change.untested("total (llama_decode time per generated token)", "ms", a.msPerGeneratedToken(),
                b.msPerGeneratedToken(), true);
        return new RunDiff(a, b, Identity.compare(a.run(), b.run()), List.copyOf(rates), List.copyOf(ops), outside,
                total, Experts.shares(a.totals(), b.totals()));
    }

    private static double msPer(double ms, long tokens) {
        return tokens == 0 ? Double.NaN : ms / tokens;
    }

    /**
     * The changes that regressed beyond {@code percent} with significance: the decode rate, and each op's time per
     * token where its rise is also at least 1 % of A's total time per token.
     */
    public List<Change> regressions(double percent) {
        List<Change> regressed = new ArrayList<>();
        Change decodeTime = rate(DECODE_TIME);
        Change decodeRate = rate(DECODE_RATE);
        // The rate's fall, with the test of the time per token it is the inverse of.
        if (decodeTime.significant() && decodeRate.deltaPercent() < -percent) {
            regressed.add(new Change(decodeRate.name(), decodeRate.unit(), decodeRate.a(), decodeRate.b(),
                    decodeTime.p(), decodeTime.pAdjusted(), decodeTime.samplesA(), decodeTime.samplesB(), false));
        }
        for (OpChange op : ops) {
            if (op.time().regressedBeyond(percent) && op.time().delta() >= GATE_FLOOR_OF_TOTAL * total.a()) {
                regressed.add(op.time());
            }
        }
        return regressed;
    }

    /**
     * The least rise, as a share of A's total time per token, that lets an op fail --fail-on: a small op (ADD at a
     * few microseconds a call) can double from one run to the next on a busy machine, and moves the token by less.
     */
    static final double GATE_FLOOR_OF_TOTAL = 0.01;

    static final String DECODE_TIME = "decode time per generated token";
    static final String DECODE_RATE = "decode tokens/s";

    public Change rate(String name) {
        return rates.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    /** Figures tested, and how many of them changed significantly. */
    public long testedCount() {
        return rates.stream().filter(Change::tested).count() + ops.stream().filter(o -> o.time().tested()).count();
    }

    public long significantCount() {
        return rates.stream().filter(Change::significant).count()
                + ops.stream().filter(o -> o.time().significant()).count();
    }
}
