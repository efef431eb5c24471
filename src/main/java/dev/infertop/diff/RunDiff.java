package dev.infertop.diff;

import dev.infertop.model.JsonSchema;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Two runs compared, or two sets of runs: what differs between them (model, build, threads, layers), the token
 * rates and latencies, and per op type the time per generated token with the figures beside it, biggest movers
 * first, closed by the time outside the traced ops and the total, which add up. Every change with samples on both
 * sides is rank-tested, and the p-values are adjusted together (Holm) so that a diff of two runs of the same thing
 * calls nothing significant in at least 95 % of cases, however many ops it lists.
 *
 * <p>With one run a side the samples are the runs' intervals. With several runs on either side they are the runs
 * themselves, one value per run and figure (its figure over the whole run): a difference between two runs as wholes
 * (the machine busier during one) then counts as the noise it is, not as a change. A side's figure is then the mean
 * of its runs' figures, which keeps the ops, the time outside them and the total adding up; a rate is 1000 over
 * the mean time per token.
 *
 * @param runsA     A's runs (one or more), in the order given
 * @param rates     decode and prefill time per token (tested), tokens/s, TTFT and TPOT percentiles, weights per
 *                  token, barrier wait per token (not tested: no per-interval samples in a snapshot)
 * @param ops       per op type, sorted by the absolute change of time per generated token
 * @param outside   time per generated token outside the traced ops (llama_decode time the ops do not cover)
 * @param total     llama_decode time per generated token: the ops and {@link #outside} add up to it
 * @param experts   per MoE expert, its share of the selections, when both runs have them
 * @param largePercent the change (either way, percent) from which a figure without significance is named
 *                  "large but undecided" rather than "not significant"
 */
public record RunDiff(List<RunMetrics> runsA, List<RunMetrics> runsB, Identity.Comparison identity,
                      List<Change> rates, List<OpChange> ops, Change outside, Change total, List<Change> experts,
                      double largePercent) {

    /** Without --fail-on, the change from which a figure the test cannot call is named large. */
    public static final double DEFAULT_LARGE_PERCENT = 10;

    public RunDiff {
        runsA = List.copyOf(runsA);
        runsB = List.copyOf(runsB);
        rates = List.copyOf(rates);
        ops = List.copyOf(ops);
    }

    /**
     * One op type in both sides: its time per generated token (the tested change) and its other figures (the means
     * of the runs it ran in; null where it ran in none).
     */
    public record OpChange(String op, RunMetrics.Op a, RunMetrics.Op b, Change time) {}

    public static RunDiff of(RunMetrics a, RunMetrics b) throws DiffInputException {
        return of(List.of(a), List.of(b), DEFAULT_LARGE_PERCENT);
    }

    public static RunDiff of(List<RunMetrics> a, List<RunMetrics> b, double largePercent) throws DiffInputException {
        if (a.isEmpty() || b.isEmpty()) {
            throw new DiffInputException("nothing to compare: " + (a.isEmpty() ? "A" : "B") + " has no run");
        }
        long decodeA = a.stream().mapToLong(RunMetrics::tokensDecode).sum();
        long decodeB = b.stream().mapToLong(RunMetrics::tokensDecode).sum();
        long prefillA = a.stream().mapToLong(RunMetrics::tokensPrefill).sum();
        long prefillB = b.stream().mapToLong(RunMetrics::tokensPrefill).sum();
        if ((decodeA == 0 || decodeB == 0) && (prefillA == 0 || prefillB == 0)) {
            throw new DiffInputException("nothing to compare: " + label(a) + " generated " + decodeA
                    + " tokens and read " + prefillA + " prompt tokens, " + label(b) + " " + decodeB + " and "
                    + prefillB);
        }
        boolean betweenRuns = a.size() > 1 || b.size() > 1;
        List<Change> tested = new ArrayList<>();
        List<Change> rates = new ArrayList<>();
        rates.add(figure(DECODE_TIME, "ms", a, b, betweenRuns, RunDiff::decodeMsPerToken, RunMetrics::decodeSamples));
        rates.add(figure(PREFILL_TIME, "ms", a, b, betweenRuns, RunDiff::prefillMsPerToken,
                RunMetrics::prefillSamples));
        tested.addAll(rates);
        // Ops in every run's table; none when a run has no op figures (its operator layer off): a missing side is
        // then unknown, not zero.
        Set<String> names = new LinkedHashSet<>();
        if (a.stream().noneMatch(r -> r.ops().isEmpty()) && b.stream().noneMatch(r -> r.ops().isEmpty())) {
            a.forEach(r -> names.addAll(r.ops().keySet()));
            b.forEach(r -> names.addAll(r.ops().keySet()));
        }
        List<OpChange> ops = new ArrayList<>();
        for (String op : names) {
            // Tested only where every run of both sides ran it: an op one build does not run has no change to test.
            boolean everywhere = a.stream().allMatch(r -> r.ops().containsKey(op))
                    && b.stream().allMatch(r -> r.ops().containsKey(op));
            ToDoubleFunction<RunMetrics> msPerToken = r -> r.ops().containsKey(op) ? r.ops().get(op).msPerToken() : 0;
            Change time = everywhere ? figure(op, "ms", a, b, betweenRuns, msPerToken, r -> r.opSamples(op))
                    : Change.untested(op, "ms", mean(a, msPerToken), mean(b, msPerToken), true);
            ops.add(new OpChange(op, RunMetrics.Op.mean(op, a), RunMetrics.Op.mean(op, b), time));
            tested.add(time);
        }
        double[] p = tested.stream().mapToDouble(Change::p).toArray();
        double[] adjusted = RankTest.holm(p);
        // The floor: Holm over every tested figure at the smallest p its sample sizes allow. Holm's adjusted p only
        // rises with any p, so no data of these sizes gives a figure less than this.
        double[] floors = RankTest.holm(tested.stream().mapToDouble(c -> Double.isNaN(c.p()) ? Double.NaN
                : RankTest.minimumP(c.samplesA(), c.samplesB())).toArray());
        for (int i = 0; i < rates.size(); i++) {
            rates.set(i, rates.get(i).withAdjusted(adjusted[i], floors[i]));
        }
        for (int i = 0; i < ops.size(); i++) {
            OpChange op = ops.get(i);
            ops.set(i, new OpChange(op.op(), op.a(), op.b(),
                    op.time().withAdjusted(adjusted[rates.size() + i], floors[rates.size() + i])));
        }
        ops.sort(Comparator.comparingDouble((OpChange o) -> -Math.abs(o.time().delta())).thenComparing(OpChange::op));
        rates.add(Change.untested(DECODE_RATE, "tok/s", rate(rates.get(0).a()), rate(rates.get(0).b()), false));
        rates.add(Change.untested("prefill tokens/s", "tok/s", rate(rates.get(1).a()), rate(rates.get(1).b()), false));
        for (JsonSchema field : List.of(JsonSchema.TTFT_MS, JsonSchema.TPOT_MS)) {
            for (JsonSchema.LatencyField percentile : List.of(JsonSchema.LatencyField.P50, JsonSchema.LatencyField.P99)) {
                String name = field.key().substring(0, 4).toUpperCase(Locale.ROOT) + " " + percentile.key();
                rates.add(Change.untested(name, "ms", mean(a, r -> r.latencyMs(field, percentile)),
                        mean(b, r -> r.latencyMs(field, percentile)), true));
            }
        }
        rates.add(Change.untested("weight bytes per decode token", "bytes", mean(a,
                RunMetrics::weightBytesPerDecodeToken), mean(b, RunMetrics::weightBytesPerDecodeToken), true));
        rates.add(Change.untested("barrier wait per generated token", "ms", mean(a, RunMetrics::barrierWaitMsPerToken),
                mean(b, RunMetrics::barrierWaitMsPerToken), true));
        ToDoubleFunction<RunMetrics> outside = r -> r.msPerGeneratedToken() - (r.ops().isEmpty() ? 0
                : r.opsMsPerToken());
        Change outsideChange = Change.untested("outside traced ops", "ms", mean(a, outside), mean(b, outside), true);
        Change total = Change.untested("total (llama_decode time per generated token)", "ms",
                mean(a, RunMetrics::msPerGeneratedToken), mean(b, RunMetrics::msPerGeneratedToken), true);
        List<String> notes = new ArrayList<>();
        notes.addAll(Identity.withinSide("A", a.stream().map(RunMetrics::run).toList()));
        notes.addAll(Identity.withinSide("B", b.stream().map(RunMetrics::run).toList()));
        Identity.Comparison identity = Identity.compare(a.getFirst().run(), b.getFirst().run(), notes);
        return new RunDiff(a, b, identity, rates, ops, outsideChange, total, Experts.shares(
                a.stream().map(RunMetrics::totals).toList(), b.stream().map(RunMetrics::totals).toList()),
                largePercent);
    }

    /**
     * A tested figure: its value on each side (the mean over the side's runs), and its test over the runs' values
     * where runs are compared, over the one run's interval samples otherwise. A run without the figure (NaN: it
     * generated nothing) gives no value.
     */
    private static Change figure(String name, String unit, List<RunMetrics> a, List<RunMetrics> b, boolean betweenRuns,
                                 ToDoubleFunction<RunMetrics> value, Function<RunMetrics, double[]> intervals) {
        double meanA = mean(a, value);
        double meanB = mean(b, value);
        if (Double.isNaN(meanA) || Double.isNaN(meanB)) {
            return Change.untested(name, unit, meanA, meanB, true);
        }
        if (betweenRuns) {
            return Change.tested(name, unit, meanA, meanB, values(a, value), values(b, value), true);
        }
        return Change.tested(name, unit, meanA, meanB, intervals.apply(a.getFirst()), intervals.apply(b.getFirst()),
                true);
    }

    private static double[] values(List<RunMetrics> runs, ToDoubleFunction<RunMetrics> value) {
        return runs.stream().mapToDouble(value).filter(v -> !Double.isNaN(v)).toArray();
    }

    /** The mean over the runs that have the figure; NaN when none has it. */
    static double mean(List<RunMetrics> runs, ToDoubleFunction<RunMetrics> value) {
        double[] values = values(runs, value);
        return values.length == 0 ? Double.NaN : Arrays.stream(values).sum() / values.length;
    }

    private static double decodeMsPerToken(RunMetrics run) {
        return msPer(run.decodeBusyMs(), run.tokensDecode());
    }

    private static double prefillMsPerToken(RunMetrics run) {
        return msPer(run.prefillBusyMs(), run.tokensPrefill());
    }

    private static double rate(double msPerToken) {
        return Double.isNaN(msPerToken) || msPerToken <= 0 ? Double.NaN : 1000 / msPerToken;
    }

    private static double msPer(double ms, long tokens) {
        return tokens == 0 ? Double.NaN : ms / tokens;
    }

    /** A side as messages name it: its run's path, or "A (3 runs)". */
    private static String label(List<RunMetrics> runs) {
        return runs.size() == 1 ? runs.getFirst().run().path().toString() : "its " + runs.size() + " runs";
    }

    /** A's first run: the one whose identity, intervals and paths stand for the side in the text and the page. */
    public RunMetrics a() {
        return runsA.getFirst();
    }

    public RunMetrics b() {
        return runsB.getFirst();
    }

    /** Whether the tests compare runs (several on a side) rather than one run's intervals with the other's. */
    public boolean betweenRuns() {
        return runsA.size() > 1 || runsB.size() > 1;
    }

    /** What one sample of a test is: "intervals" or "runs". */
    public String sampleUnit() {
        return betweenRuns() ? "runs" : "intervals";
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
            regressed.add(decodeRateTested());
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

    /** The decode rate with the test of the time per token it is the inverse of. */
    Change decodeRateTested() {
        Change decodeTime = rate(DECODE_TIME);
        Change decodeRate = rate(DECODE_RATE);
        return decodeTime.asFigure(decodeRate.name(), decodeRate.unit(), decodeRate.a(), decodeRate.b(), false);
    }

    /** Every tested figure, the token figures first. */
    public List<Change> testedFigures() {
        List<Change> all = new ArrayList<>(rates.stream().filter(Change::tested).toList());
        ops.stream().map(OpChange::time).filter(Change::tested).forEach(all::add);
        return all;
    }

    /** Tested figures with this evidence. */
    public long count(Change.Evidence evidence) {
        return testedFigures().stream().filter(c -> c.evidence(largePercent) == evidence).count();
    }

    static final String DECODE_TIME = "decode time per generated token";
    static final String PREFILL_TIME = "prefill time per prompt token";
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
