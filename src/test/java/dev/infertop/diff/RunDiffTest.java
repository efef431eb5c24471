package dev.infertop.diff;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A: 100 tok/s (10 ms a token: MUL_MAT 6, ADD 1, outside the ops 3); B: 80 tok/s (12.5 ms: MUL_MAT 8, ADD 1,
 * outside 3.5). Decode and MUL_MAT samples are fully separated (10 against 10: exact p = 2/C(20,10)), ADD's interleave.
 */
class RunDiffTest {
    private static final double SEPARATED_P = 2.0 / 184756;

    private static RunDiff slower() throws DiffInputException {
        return DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0), DiffFixtures.run("b", 80, 8, 0.003));
    }

    @Test
    void perTokenFiguresAddUpToTheTotal() throws DiffInputException {
        RunDiff diff = slower();
        assertEquals(10, diff.total().a(), 1e-9);
        assertEquals(12.5, diff.total().b(), 1e-9);
        assertEquals(3, diff.outside().a(), 1e-9);
        assertEquals(3.5, diff.outside().b(), 1e-9);
        double sumA = diff.outside().a();
        double sumB = diff.outside().b();
        for (RunDiff.OpChange op : diff.ops()) {
            sumA += op.time().a();
            sumB += op.time().b();
        }
        assertEquals(diff.total().a(), sumA, 1e-9);
        assertEquals(diff.total().b(), sumB, 1e-9);
        assertEquals(15, diff.ops().getFirst().a().callsPerToken(), 1e-9);
        assertEquals(6.0 / 7, diff.ops().getFirst().a().share(), 1e-9); // 600 of the ops' 700 ms
    }

    @Test
    void separatedSamplesAreSignificantAfterHolmAndInterleavedOnesAreNot() throws DiffInputException {
        RunDiff diff = slower();
        assertEquals(List.of("MUL_MAT", "ADD"), diff.ops().stream().map(RunDiff.OpChange::op).toList(),
                "biggest mover first");
        Change decode = diff.rate(RunDiff.DECODE_TIME);
        assertEquals(SEPARATED_P, decode.p(), 1e-15);
        assertEquals(3 * SEPARATED_P, decode.pAdjusted(), 1e-15); // decode, MUL_MAT, ADD tested
        assertTrue(decode.significant());
        Change mulMat = diff.ops().getFirst().time();
        assertEquals(33.333333, mulMat.deltaPercent(), 1e-5);
        assertTrue(mulMat.significant());
        Change add = diff.ops().get(1).time();
        assertEquals(0, add.delta(), 1e-12);
        assertFalse(add.significant());
        assertFalse(diff.rate("prefill time per prompt token").tested(), "no prompt: not tested");
        assertEquals(3, diff.testedCount());
        assertEquals(2, diff.significantCount());
    }

    @Test
    void failOnCountsOnlySignificantRegressionsBeyondThePercentage() throws DiffInputException {
        RunDiff diff = slower();
        // decode 100 → 80 tok/s is −20 %: not beyond 20; MUL_MAT +33 % is
        assertEquals(List.of("MUL_MAT"), diff.regressions(20).stream().map(Change::name).toList());
        assertEquals(List.of("decode tokens/s", "MUL_MAT"), diff.regressions(10).stream().map(Change::name).toList());
        assertEquals(3 * SEPARATED_P, diff.regressions(10).getFirst().pAdjusted(), 1e-15, "the decode time's test");
        assertEquals(List.of(), diff.regressions(40).stream().map(Change::name).toList());
        // ADD twice as slow in B, significantly: 1 ms of a 10 ms token is a gate's business, 0.04 ms is not.
        RunRecord slowAdd = DiffFixtures.run("b", 100, 6, 0.003);
        var addB = (com.fasterxml.jackson.databind.node.ObjectNode) slowAdd.totals().path("ops").path("ADD");
        addB.put("wall_ms", 200.0);
        shiftAdd(slowAdd, 2);
        RunDiff doubled = DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0), slowAdd);
        assertEquals(List.of("ADD"), doubled.regressions(50).stream().map(Change::name).toList());
        RunRecord smallA = DiffFixtures.run("a", 100, 6, 0);
        ((com.fasterxml.jackson.databind.node.ObjectNode) smallA.totals().path("ops").path("ADD")).put("wall_ms", 4.0);
        addB.put("wall_ms", 8.0);
        shiftAdd(smallA, 0.04); // 0.01 ms a call, 4 calls: 0.04 ms a token
        shiftAdd(slowAdd, 0.08); // 0.08 ms a token: +100 %, and 0.4 % of A's 10 ms
        RunDiff small = DiffFixtures.diff(smallA, slowAdd);
        assertTrue(small.ops().stream().anyMatch(o -> o.op().equals("ADD") && o.time().significant()), "tested");
        assertEquals(List.of(), small.regressions(50).stream().map(Change::name).toList(), "below 1 % of a token");
        RunDiff faster = DiffFixtures.diff(DiffFixtures.run("b", 80, 8, 0.003), DiffFixtures.run("a", 100, 6, 0));
        assertEquals(List.of(), faster.regressions(0), "an improvement never fails");
        RunDiff same = DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0), DiffFixtures.run("a2", 100, 6, 0.0005));
        assertEquals(0, same.significantCount(), "interleaved samples: nothing significant");
        assertEquals(List.of(), same.regressions(0));
    }

    @Test
    void textListsWhatDiffersAndTheMoversWithTheirTests() throws DiffInputException {
        var b = DiffFixtures.run("b", 80, 8, 0.003);
        ((com.fasterxml.jackson.databind.node.ObjectNode) b.totals()).put("model", "/models/m-q4_0.gguf");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DiffText.print(DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0), b),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals("infertop diff  A a (json log)  ->  B b (json log)", lines.get(0));
        assertEquals("what differs:", lines.get(1));
        assertEquals("  model            A /models/m.gguf", lines.get(2));
        assertEquals("                   B /models/m-q4_0.gguf", lines.get(3));
        assertTrue(lines.contains("decode time per generated token (ms)       10.000       12.500    +25.0% <.0001 *"),
                String.join("\n", lines));
        assertTrue(lines.contains("decode tokens/s (tok/s)" + " ".repeat(19) + "100.0         80.0    -20.0%"),
                String.join("\n", lines));
        int mulMat = indexOfStart(lines, "MUL_MAT ");
        int add = indexOfStart(lines, "ADD ");
        assertEquals("MUL_MAT                    6.0000     8.0000    +2.0000   +33.3% <.0001 *  15.0>15.0       "
                + "85.7>88.9", lines.get(mulMat));
        assertTrue(lines.get(add).startsWith("ADD                        1.0000     1.0000    +0.0000    +0.0% 1.0000 ~"),
                lines.get(add));
        assertTrue(mulMat < add);
        assertEquals("outside traced ops         3.0000     3.5000    +0.5000   +16.7%", lines.get(add + 1));
        assertEquals("total                     10.0000    12.5000    +2.5000   +25.0%", lines.get(add + 2));
        assertEquals("3 figures tested, 2 changed significantly (* Mann-Whitney U over intervals, Holm-adjusted p < "
                + "0.05; ~ not significant; ! large (10% or more) but undecided; ? too few intervals to decide)",
                lines.getLast());
    }

    /** Scales a run's ADD interval samples (the fixture's interleaved ones) by {@code factor}, keyed apart by 1 ‰. */
    private static void shiftAdd(RunRecord run, double factor) {
        var intervals = run.intervals("op:ADD");
        for (int i = 0; i < intervals.size(); i++) {
            RunRecord.Interval interval = intervals.get(i);
            ((java.util.List<RunRecord.Interval>) intervals).set(i, new RunRecord.Interval(interval.startS(),
                    interval.count(), 0.25 * factor * (1 + 0.001 * i)));
        }
    }

    private static int indexOfStart(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no line starts with " + prefix);
    }

    @Test
    void jsonCarriesEachChangeWithItsTest() throws DiffInputException {
        JsonNode json = DiffJson.json(slower(), 20.0);
        assertEquals("a", json.path("a").asText());
        assertEquals("mann-whitney-u over intervals, holm-adjusted", json.path("test").asText());
        JsonNode mulMat = json.path("ops").path(0);
        assertEquals("MUL_MAT", mulMat.path("op").asText());
        assertEquals(6.0, mulMat.path("a").asDouble());
        assertEquals(8.0, mulMat.path("b").asDouble());
        assertEquals(2.0, mulMat.path("change").asDouble());
        assertEquals(33.333333, mulMat.path("change_percent").asDouble());
        assertTrue(mulMat.path("significant").asBoolean());
        assertEquals(10, mulMat.path("intervals_a").asInt());
        assertEquals(15.0, mulMat.path("a_figures").path("calls_per_token").asDouble());
        assertEquals(10.0, json.path("total").path("a").asDouble());
        assertEquals(3.5, json.path("outside_ops").path("b").asDouble());
        assertTrue(json.path("outside_ops").path("p").isNull());
        assertEquals("MUL_MAT", json.path("regressions").path(0).asText());
        assertEquals(1, json.path("regressions").size());
        assertEquals(3, json.path("tested").asInt());
        assertEquals(2, json.path("significant").asInt());
    }

    @Test
    void aRunWithoutOpFiguresGivesNoOpRowsRatherThanZeros() throws DiffInputException {
        var b = DiffFixtures.run("b", 80, 8, 0.003);
        ((com.fasterxml.jackson.databind.node.ObjectNode) b.totals()).put("op_graphs", 0);
        RunDiff diff = DiffFixtures.diff(DiffFixtures.run("a", 100, 6, 0), b);
        assertEquals(List.of(), diff.ops());
        assertEquals(1, diff.testedCount(), "decode only");
        assertTrue(diff.identity().notes().contains("B: no graph traced by the operator layer: no op figures"),
                diff.identity().notes().toString());
        assertEquals(12.5, diff.outside().b(), 1e-9, "all of B's time is outside traced ops");
    }

    @Test
    void expertSharesAreComparedWhenBothRunsHaveThem() throws DiffInputException {
        var a = DiffFixtures.run("a", 100, 6, 0);
        var b = DiffFixtures.run("b", 100, 6, 0.003);
        // A: expert 0 takes 3 of 4 selections; B: the two share them evenly (two layers, prompt and generation)
        moe(a, "[2,1]", "[1,0]", "[0,0]", "[0,0]");
        moe(b, "[1,1]", "[0,0]", "[1,1]", "[0,0]");
        List<Change> experts = DiffFixtures.diff(a, b).experts();
        assertEquals(List.of("expert 0", "expert 1"), experts.stream().map(Change::name).toList());
        assertEquals(75, experts.get(0).a(), 1e-9);
        assertEquals(50, experts.get(0).b(), 1e-9);
        assertEquals(25, experts.get(1).a(), 1e-9);
        assertEquals(List.of(), DiffFixtures.diff(a, DiffFixtures.run("c", 100, 6, 0)).experts(), "one run only");
    }

    private static void moe(RunRecord run, String prefill0, String decode0, String prefill1, String decode1) {
        try {
            var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
            var moe = ((com.fasterxml.jackson.databind.node.ObjectNode) run.totals()).putObject("moe");
            moe.put("experts", 2);
            var layers = moe.putObject("layers");
            layers.putObject("0").set("prefill", mapper.readTree(prefill0));
            ((com.fasterxml.jackson.databind.node.ObjectNode) layers.path("0")).set("decode", mapper.readTree(decode0));
            layers.putObject("1").set("prefill", mapper.readTree(prefill1));
            ((com.fasterxml.jackson.databind.node.ObjectNode) layers.path("1")).set("decode", mapper.readTree(decode1));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void runsWithNothingInCommonAreRefused() {
        var a = DiffFixtures.run("a", 100, 6, 0);
        var empty = DiffFixtures.run("b", 100, 6, 0);
        ((com.fasterxml.jackson.databind.node.ObjectNode) empty.totals()).put("tokens_decode", 0);
        DiffInputException e = assertThrows(DiffInputException.class, () -> DiffFixtures.diff(a, empty));
        assertEquals("nothing to compare: a generated 100 tokens and read 0 prompt tokens, b 0 and 0", e.getMessage());
    }
}
