package dev.infertop.diff;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The gate's three answers, and the test between runs, on runs made by hand (DiffFixtures): decode, MUL_MAT and
 * ADD tested (three figures) unless the runs have no op figures (decode alone).
 */
class GateTest {
    @Test
    void threeIntervalsASideCannotBeCalledAndTheGateSaysSo() throws DiffInputException {
        // B 25 % slower, every sample apart: yet 3 against 3 give p 0.1 at best, 0.3 after Holm over 3 figures.
        RunDiff diff = DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0, 3), DiffFixtures.run("b", 80, 8, 0.003, 3));
        Change decode = diff.rate(RunDiff.DECODE_TIME);
        assertEquals(0.1, decode.p(), 1e-15);
        assertEquals(0.3, decode.pAdjusted(), 1e-15);
        assertEquals(0.3, decode.pFloor(), 1e-15);
        assertFalse(decode.decidable());
        assertEquals(Change.Evidence.LARGE_UNDECIDED, decode.evidence(10), "+25 %: large, not hidden as ~");
        assertEquals(Change.Evidence.TOO_FEW, decode.evidence(30));
        Gate gate = Gate.of(diff, 5);
        assertEquals(Gate.Verdict.UNDECIDED, gate.verdict(), "an undecided result is not a pass");
        assertEquals(List.of(), gate.regressions());
        // ADD too: unchanged, but at 1 ms of a 10 ms token a rise of it could fail the gate, and none could be called.
        assertEquals(List.of("decode tokens/s", "MUL_MAT", "ADD"), gate.undecided().stream()
                .map(u -> u.change().name()).toList());
        assertTrue(gate.undecided().stream().allMatch(Gate.Undecided::tooFew));
        assertEquals("3 intervals against 3 reach p 0.1000 at best, 0.3000 after Holm over 3 figures: 5 intervals a "
                + "side would decide it (-d 0.2, longer runs), or 5 runs a side (diff --turns 5)", gate.advice());
        assertEquals("undecided at 5.0% (decode tokens/s -20.0% too few samples, MUL_MAT +33.3% too few samples, "
                + "ADD +0.0% too few samples): "
                + gate.advice(), gate.line());
        // The same with 10 intervals a side: decided, a regression.
        assertEquals(Gate.Verdict.REGRESSION, Gate.of(DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0),
                DiffFixtures.run("b", 80, 8, 0.003)), 5).verdict());
    }

    @Test
    void runsAreTheSamplesWhereASideHasSeveral() throws DiffInputException {
        // Three runs a side, wholly apart: p 0.1 (2 / C(6,3)), whatever their intervals say.
        RunDiff three = DiffFixtures.diff(DiffFixtures.runs("a", false, 100, 101, 102),
                DiffFixtures.runs("b", false, 80, 81, 82), 10);
        assertTrue(three.betweenRuns());
        assertEquals("runs", three.sampleUnit());
        Change decode = three.rate(RunDiff.DECODE_TIME);
        assertEquals(3, decode.samplesA());
        assertEquals(0.1, decode.p(), 1e-15);
        assertEquals(0.1, decode.pFloor(), 1e-15, "decode alone: no Holm factor");
        // A's figure is the mean of its runs' times; its rate 1000 over that.
        double meanMs = (1000 / 100.0 + 1000 / 101.0 + 1000 / 102.0) / 3;
        assertEquals(meanMs, decode.a(), 1e-12);
        assertEquals(1000 / meanMs, three.rate(RunDiff.DECODE_RATE).a(), 1e-9);
        Gate undecided = Gate.of(three, 10);
        assertEquals(Gate.Verdict.UNDECIDED, undecided.verdict());
        assertEquals("3 runs against 3 reach p 0.1000 at best, 0.1000 after Holm over 1 figures: 4 runs a side would "
                + "decide it (diff --turns 4)", undecided.advice());
        // Four a side: 2/70 = 0.0286, below 0.05: the fall of 20 % is called.
        RunDiff four = DiffFixtures.diff(DiffFixtures.runs("a", false, 100, 101, 102, 103),
                DiffFixtures.runs("b", false, 80, 81, 82, 83), 10);
        assertEquals(2.0 / 70, four.rate(RunDiff.DECODE_TIME).pAdjusted(), 1e-15);
        Gate regressed = Gate.of(four, 10);
        assertEquals(Gate.Verdict.REGRESSION, regressed.verdict());
        assertEquals("regressed beyond 10.0%: decode tokens/s -19.7% (p 0.0286)", regressed.line());
        // With MUL_MAT and ADD tested as well, four a side are too few again: 3 × 0.0286 = 0.086.
        RunDiff withOps = DiffFixtures.diff(DiffFixtures.runs("a", true, 100, 101, 102, 103),
                DiffFixtures.runs("b", true, 80, 81, 82, 83), 10);
        assertEquals(3, withOps.testedCount());
        assertEquals(3 * 2.0 / 70, withOps.rate(RunDiff.DECODE_TIME).pFloor(), 1e-15);
        assertEquals(Gate.Verdict.UNDECIDED, Gate.of(withOps, 10).verdict());
        // Five a side: 3 × 2/252 = 0.0238: decode and MUL_MAT called; ADD, the same in every run, is not.
        RunDiff five = DiffFixtures.diff(DiffFixtures.runs("a", true, 100, 101, 102, 103, 104),
                DiffFixtures.runs("b", true, 80, 81, 82, 83, 84), 10);
        assertEquals(3 * 2.0 / 252, five.rate(RunDiff.DECODE_TIME).pAdjusted(), 1e-15);
        Gate called = Gate.of(five, 10);
        assertEquals(List.of("decode tokens/s", "MUL_MAT"), called.regressions().stream().map(Change::name).toList());
        Change add = five.ops().stream().filter(o -> o.op().equals("ADD")).findFirst().orElseThrow().time();
        assertEquals(Change.Evidence.NOT_SIGNIFICANT, add.evidence(10));
        assertEquals(5, add.samplesA());
    }

    @Test
    void driftBetweenRunsIsNoiseNotAChange() throws DiffInputException {
        // Each run's intervals are tight, and runs differ as wholes: A at 100, 90, 80 tok/s, B at 95, 85, 75.
        List<RunRecord> a = DiffFixtures.runs("a", false, 100, 90, 80);
        List<RunRecord> b = DiffFixtures.runs("b", false, 95, 85, 75);
        // One run against one: ten intervals against ten, wholly apart: "significant".
        RunDiff one = DiffFixtures.diff(a.subList(0, 1), b.subList(0, 1), 10);
        assertEquals(2.0 / 184756, one.rate(RunDiff.DECODE_TIME).p(), 1e-15);
        assertTrue(one.rate(RunDiff.DECODE_TIME).significant());
        // Three against three, run values interleaved (10, 10.53 | 11.11, 11.76 | 12.5, 13.33 ms): U 3, p 0.7.
        RunDiff runs = DiffFixtures.diff(a, b, 10);
        assertEquals(0.7, runs.rate(RunDiff.DECODE_TIME).p(), 1e-12);
        assertFalse(runs.rate(RunDiff.DECODE_TIME).significant());
    }

    @Test
    void aLargeChangeThatSpreadsIsUndecidedAndNamed() throws DiffInputException {
        // Six runs a side (decidable: 2/924 at best), B's mean 27 % slower through two slow runs, ranks interleaved.
        RunDiff diff = DiffFixtures.diff(DiffFixtures.runs("a", false, 100, 99, 98, 97, 96, 95),
                DiffFixtures.runs("b", false, 101, 99.5, 97.5, 96.5, 40, 35), 10);
        Change decode = diff.rate(RunDiff.DECODE_TIME);
        assertTrue(decode.decidable());
        assertFalse(decode.significant());
        assertEquals(Change.Evidence.LARGE_UNDECIDED, decode.evidence(10));
        Gate gate = Gate.of(diff, 10);
        assertEquals(Gate.Verdict.UNDECIDED, gate.verdict());
        assertFalse(gate.undecided().getFirst().tooFew());
        assertTrue(gate.advice().startsWith("decode tokens/s -"), gate.advice());
        assertTrue(gate.advice().endsWith("is large but undecided (p " + Gate.number(decode.pAdjusted())
                + " after Holm): the samples spread too widely to call it: more runs a side (now 6 and 6), taken in "
                + "turns on a quieter machine"), gate.advice());
        // The same runs against themselves, shuffled: nothing large, nothing significant: no regression.
        RunDiff same = DiffFixtures.diff(DiffFixtures.runs("a", false, 100, 99, 98, 97, 96, 95),
                DiffFixtures.runs("b", false, 99.5, 98.5, 100.5, 96.5, 95.5, 97.5), 10);
        assertEquals(Change.Evidence.NOT_SIGNIFICANT, same.rate(RunDiff.DECODE_TIME).evidence(10));
        assertEquals(Gate.Verdict.NO_REGRESSION, Gate.of(same, 10).verdict());
        assertEquals("", Gate.of(same, 10).advice());
    }

    @Test
    void textNamesUndecidedFiguresAndTheirReason() throws DiffInputException {
        RunDiff diff = DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0, 3), DiffFixtures.run("b", 80, 8, 0.003, 3));
        var bytes = new java.io.ByteArrayOutputStream();
        DiffText.print(diff, new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(java.nio.charset.StandardCharsets.UTF_8).lines().toList();
        assertTrue(lines.contains("decode time per generated token (ms)       10.000       12.500    +25.0% 0.3000 !"),
                String.join("\n", lines));
        assertTrue(lines.contains("large but undecided: decode time per generated token +25.0% (p 0.3000 after Holm, "
                + "3 against 3 intervals: too few to decide)"), String.join("\n", lines));
        assertTrue(lines.contains("too few samples: 3 intervals against 3 reach p 0.1000 at best, 0.3000 after Holm "
                + "over 3 figures: no change here can be called significant"), String.join("\n", lines));
        assertTrue(lines.getLast().startsWith("3 figures tested, 0 changed significantly, 2 large but undecided, "
                + "1 undecided (too few intervals)"), lines.getLast());
        var json = DiffJson.json(diff, 5.0);
        assertEquals("undecided", json.path("gate").asText());
        assertEquals("too few samples", json.path("undecided").path(0).path("reason").asText());
        assertEquals("large but undecided", json.path("tokens").path(0).path("evidence").asText());
        assertEquals(0.3, json.path("tokens").path(0).path("p_floor").asDouble(), 1e-12);
        assertEquals(2, json.path("large_undecided").asInt());
    }
}
