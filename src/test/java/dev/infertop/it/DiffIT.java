package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.SyntheticModel;
import dev.infertop.workload.gguf.ProgressListener;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code infertop diff} on snapshots of real traced llama-bench runs of a small dense model (26 M parameters, two
 * layers of n_embd 1024, so that its matmuls dominate a token): runs of the same thing show the same graph and pass
 * the gate, and a run's intervals dealt into two halves show no significant change (in at least two of three runs); the model against its Q4_0 copy (llama.cpp's llama-quantize) shows MUL_MAT's time and bytes per token
 * falling, with a total per token that is the runs' own decode rate; one thread against two shows the barrier wait
 * the second thread brings; {@code --fail-on} exits 0 and 1 on those, and a missing or damaged snapshot is one line
 * and exit status 2. The same runs' --json logs diff as their snapshots do, and report still reads the snapshots.
 * The gate on short runs: one short run a side never passes (undecided, exit 3, or a regression); runs in turns
 * ({@code diff --turns}, eight a side) call the Q4_0 to F16 regression between runs, and two sets of six runs of
 * the same thing call nothing significant (in at least one of two trials).
 */
class DiffIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** n_embd 1024, 2 layers, n_ff 2816, vocabulary 2048: ~51 MiB in F16, ~15 MiB in Q4_0. */
    private static final SyntheticModel MODEL = new SyntheticModel("diff", 2048, 1024, 2, 2816, 16, 4, 2048, 0, 0,
            SyntheticModel.DEFAULT_SEED, 0);

    private static LlamaCppWorkload llama;
    private static Path f16;

    @TempDir
    static Path work;

    @BeforeAll
    static void requirements() throws Exception {
        llama = Requirements.canTraceLlamaCpp();
        f16 = MODEL.writeToCache(LlamaCppWorkload.cacheDir().resolve("models"), ProgressListener.NONE);
    }

    private static Path quantized(String type) throws Exception {
        Path quantize = llama.sourceBuildTool("llama-quantize");
        Requirements.require(Files.isExecutable(quantize), "llama-quantize missing: run src/scripts/setup.sh");
        Path model = work.resolve("diff-" + type + ".gguf");
        Process q = new ProcessBuilder(quantize.toString(), f16.toString(), model.toString(), type)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(q.waitFor(120, TimeUnit.SECONDS) && q.exitValue() == 0, "llama-quantize " + type);
        return model;
    }

    /**
     * A snapshot (and the --json log beside it) of llama-bench generating {@code tokens} tokens {@code repetitions}
     * times after its warm-up, no prompt; every graph traced ({@code --budget 0}: the op rows unscaled), 0.2 s
     * intervals so that a run of a few seconds gives the rank test ten or more of them.
     */
    private static Path run(String name, Path model, int threads, int tokens, int repetitions) throws Exception {
        Path dir = work.resolve(name);
        // At most 300 intervals (60 s): a quiet machine's bench ends first; where a busy loop per core holds the
        // cores, the run ends at the bound with as many intervals as the rank test needs, not past the wait.
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.2", "-n", "300", "--budget", "0",
                "--snapshot-on-exit",
                "--snapshot-dir", dir.toString(), "--", llama.sourceBuildTool("llama-bench").toString(), "-m",
                model.toString(), "-p", "0", "-n", Integer.toString(tokens), "-r", Integer.toString(repetitions), "-t",
                Integer.toString(threads)));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(180), infertop.stderrText());
            Files.write(work.resolve(name + ".jsonl"), infertop.stdout);
        } finally {
            LeakCheck.assertNothingLeft();
        }
        assertTrue(Files.isRegularFile(dir.resolve("summary.json")), "no snapshot in " + dir);
        return dir;
    }

    /** A snapshot's llama_decode time (decode and prompt steps, from its token counts and rates) per generated token. */
    private static double llamaDecodeMsPerGeneratedToken(Path snapshot) throws IOException {
        JsonNode summary = JSON.readTree(snapshot.resolve("summary.json").toFile());
        double decode = summary.path("tokens_decode").asDouble();
        double prompt = summary.path("tokens_prefill").asDouble();
        double busyS = decode / summary.path("decode_tokens_per_s").asDouble()
                + (prompt == 0 ? 0 : prompt / summary.path("prefill_tokens_per_s").asDouble());
        return 1000 * busyS / decode;
    }

    /**
     * The --json log {@code log} with every other interval object (from the {@code first}th) and its final object:
     * half of one run's samples, with the whole run's totals.
     */
    private static Path halves(Path log, int first) throws Exception {
        List<String> lines = Files.readAllLines(log);
        List<String> half = new ArrayList<>();
        int interval = 0;
        for (String line : lines) {
            JsonNode node = JSON.readTree(line);
            if (node.path("final").asBoolean()) {
                half.add(line);
            } else if (interval++ % 2 == first) {
                half.add(line);
            }
        }
        Path out = work.resolve(log.getFileName() + ".half" + first);
        Files.write(out, half);
        return out;
    }

    private record Result(int exit, List<String> stdout, List<String> stderr) {
        JsonNode json() throws Exception {
            return JSON.readTree(String.join("\n", stdout));
        }

        String text() {
            return String.join("\n", stdout);
        }
    }

    private static Result diff(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("diff"));
        all.addAll(List.of(args));
        try (InfertopProcess infertop = InfertopProcess.start(all.toArray(String[]::new))) {
            int exit = infertop.waitFor(60);
            return new Result(exit, List.copyOf(infertop.stdout), List.copyOf(infertop.stderr));
        }
    }

    private static JsonNode op(JsonNode diff, String name) {
        for (JsonNode op : diff.path("ops")) {
            if (op.path("op").asText().equals(name)) {
                return op;
            }
        }
        throw new AssertionError("no " + name + " in " + diff);
    }

    private static JsonNode tokens(JsonNode diff, String name) {
        for (JsonNode row : diff.path("tokens")) {
            if (row.path("name").asText().equals(name)) {
                return row;
            }
        }
        throw new AssertionError("no " + name + " in " + diff);
    }

    @Test
    void identicalQuantizedAndThreadPairsDiffAsTheyShould() throws Exception {
        Path q4 = quantized("Q4_0");
        // Long enough that every run gives the rank test enough intervals a side on a fast machine too (with a
        // third of these repetitions a quiet machine's runs left the gate undecided: too few intervals).
        Path first = run("f16-1", f16, 1, 48, 30);
        Path second = run("f16-2", f16, 1, 48, 30);
        Path third = run("f16-3", f16, 1, 48, 30);
        Path quant = run("q4_0", q4, 1, 48, 60);
        Path twoThreads = run("f16-t2", f16, 2, 48, 36);

        // The same model, build and flags, three runs one after the other: the same graph (calls and bytes per
        // token), nothing differs, and the gate passes. Whether the rank test calls their difference significant
        // depends on the machine: two runs of this on the shared 2-core VM differed by up to 2x in decode rate
        // (man infertop, DIFF: what the test cannot see), so that is printed, not asserted, here.
        for (Path[] pair : new Path[][] {{first, second}, {second, third}}) {
            Result text = diff(pair[0].toString(), pair[1].toString(), "--fail-on", "50");
            System.out.println("diff: identical pair\n" + text.text());
            assertEquals(0, text.exit(), text.text() + "\n" + String.join("\n", text.stderr()));
            assertTrue(text.text().contains("what differs: nothing recorded"), text.text());
            JsonNode same = diff(pair[0].toString(), pair[1].toString(), "--json").json();
            assertTrue(same.path("tested").asInt() >= 5, same.toString());
            for (JsonNode op : same.path("ops")) {
                assertEquals(op.path("a_figures").path("calls_per_token").asDouble(),
                        op.path("b_figures").path("calls_per_token").asDouble(), 0.01, op.toString());
                assertEquals(op.path("a_figures").path("bytes_per_token").asDouble(),
                        op.path("b_figures").path("bytes_per_token").asDouble(),
                        0.01 * op.path("a_figures").path("bytes_per_token").asDouble(), op.toString());
            }
            System.out.println("diff: identical pair: " + same.path("significant").asInt() + " of "
                    + same.path("tested").asInt() + " figures significant");
        }
        // Samples of the same conditions: each run's intervals dealt alternately into two logs (each with the run's
        // totals), free of run-to-run drift. Holm keeps a false positive below 5 % a diff: two or more of three
        // would happen less than once in a hundred (3 × 0.05²), so at most one may show anything significant.
        List<String> flagged = new ArrayList<>();
        for (String name : List.of("f16-1", "f16-2", "f16-3")) {
            JsonNode halves = diff(halves(work.resolve(name + ".jsonl"), 0).toString(),
                    halves(work.resolve(name + ".jsonl"), 1).toString(), "--json").json();
            assertTrue(halves.path("tested").asInt() >= 5, halves.toString());
            System.out.println("diff: alternate intervals of " + name + ": " + halves.path("significant").asInt()
                    + " of " + halves.path("tested").asInt() + " figures significant, intervals "
                    + tokens(halves, "decode time per generated token").path("intervals_a").asInt() + "/"
                    + tokens(halves, "decode time per generated token").path("intervals_b").asInt());
            if (halves.path("significant").asInt() > 0) {
                flagged.add(name + ": " + halves);
            }
        }
        assertTrue(flagged.size() <= 1, "alternate intervals of one run called significant:\n"
                + String.join("\n", flagged));

        // F16 against its Q4_0 copy (the quantized run four times as long: compared per generated token).
        Result quantText = diff(first.toString(), quant.toString(), "--html", work.resolve("q.html").toString());
        System.out.println("diff: F16 -> Q4_0\n" + quantText.text());
        assertEquals(0, quantText.exit(), String.join("\n", quantText.stderr()));
        JsonNode quantDiff = diff(first.toString(), quant.toString(), "--json").json();
        assertEquals("model", quantDiff.path("differs").path(0).path("name").asText(), quantDiff.toString());
        JsonNode mulMat = op(quantDiff, "MUL_MAT");
        assertEquals("MUL_MAT", quantDiff.path("ops").path(0).path("op").asText(), "the biggest mover");
        assertTrue(mulMat.path("change").asDouble() < 0 && mulMat.path("significant").asBoolean(), mulMat.toString());
        // The same graph: calls per generated token agree to within the runs' different share of prompt graphs
        // (each repetition's first token, at position 0, is its prompt: 10 of 481 graphs here, 40 of 1921 there),
        // well under the one call in 15 that a graph with one MUL_MAT more or less would move it by.
        double aCalls = mulMat.path("a_figures").path("calls_per_token").asDouble();
        assertEquals(aCalls, mulMat.path("b_figures").path("calls_per_token").asDouble(), 0.01 * aCalls,
                "the same graph");
        double bytesRatio = mulMat.path("b_figures").path("bytes_per_token").asDouble()
                / mulMat.path("a_figures").path("bytes_per_token").asDouble();
        // Q4_0 stores 32 weights in 18 bytes (4.5 bits) where F16 takes 64: the matmuls read 0.28 as many weight bytes.
        assertTrue(bytesRatio > 0.25 && bytesRatio < 0.35, "MUL_MAT bytes per token Q4_0/F16: " + bytesRatio);
        JsonNode weights = tokens(quantDiff, "weight bytes per decode token");
        assertTrue(weights.path("b").asDouble() < 0.35 * weights.path("a").asDouble(), weights.toString());
        // The total per generated token is all of the run's llama_decode time over its generated tokens, from the
        // run's own rates: its decode steps and its prompt steps (each repetition's first token, at position 0).
        JsonNode total = quantDiff.path("total");
        assertEquals(llamaDecodeMsPerGeneratedToken(first), total.path("a").asDouble(), 0.01 * total.path("a").asDouble());
        assertEquals(llamaDecodeMsPerGeneratedToken(quant), total.path("b").asDouble(), 0.01 * total.path("b").asDouble());
        double sum = quantDiff.path("outside_ops").path("change").asDouble();
        for (JsonNode op : quantDiff.path("ops")) {
            sum += op.path("change").asDouble();
        }
        assertEquals(total.path("change").asDouble(), sum, 1e-3, "the rows add up to the total");
        String html = Files.readString(work.resolve("q.html"));
        assertTrue(html.contains("<svg class=\"plot bars\"") && html.strip().endsWith("</html>"), "html report");

        // One thread against two: the second thread brings barrier waits; each op runs the same calls per token.
        JsonNode threads = diff(first.toString(), twoThreads.toString(), "--json").json();
        System.out.println("diff: 1 -> 2 threads\n" + diff(first.toString(), twoThreads.toString()).text());
        assertTrue(threads.path("differs").toString().contains("\"threads\""), threads.path("differs").toString());
        JsonNode barrier = tokens(threads, "barrier wait per generated token");
        assertTrue(barrier.path("b").asDouble() > 10 * Math.max(barrier.path("a").asDouble(), 1e-4), barrier.toString());
        for (JsonNode op : threads.path("ops")) {
            double calls = op.path("a_figures").path("calls_per_token").asDouble();
            assertEquals(calls, op.path("b_figures").path("calls_per_token").asDouble(), 0.01 * calls, op.toString());
        }
        assertTrue(op(threads, "MUL_MAT").path("b_figures").path("barrier_wait_ms_per_token").asDouble() > 0,
                op(threads, "MUL_MAT").toString());

        // --fail-on: Q4_0 -> F16 is a regression (MUL_MAT several times slower); exit 1 with one line saying so.
        Result regressed = diff(quant.toString(), first.toString(), "--fail-on", "20");
        assertEquals(1, regressed.exit(), regressed.text());
        assertEquals(1, regressed.stderr().size(), String.join("\n", regressed.stderr()));
        assertTrue(regressed.stderr().getFirst().startsWith("infertop: regressed beyond 20.0%: ")
                && regressed.stderr().getFirst().contains("MUL_MAT"), regressed.stderr().getFirst());

        // The --json logs of the same runs compare as their snapshots do.
        JsonNode logs = diff(work.resolve("f16-1.jsonl").toString(), work.resolve("q4_0.jsonl").toString(), "--json")
                .json();
        assertEquals("json log", logs.path("a_source").asText());
        assertTrue(op(logs, "MUL_MAT").path("change").asDouble() < 0, logs.toString());
        assertEquals(mulMat.path("a").asDouble(), op(logs, "MUL_MAT").path("a").asDouble(), 1e-3);

        // A missing directory, a damaged snapshot: one line, exit status 2.
        Result missing = diff(first.toString(), work.resolve("nothing-here").toString(), "--fail-on", "10");
        assertEquals(2, missing.exit());
        assertEquals(List.of("infertop: " + work.resolve("nothing-here") + ": no such snapshot directory or --json log"),
                missing.stderr());
        Path damaged = work.resolve("damaged");
        Files.createDirectories(damaged);
        for (String file : List.of("summary.json", "latency.hlog", "trace.json", "report.html")) {
            Files.copy(second.resolve(file), damaged.resolve(file));
        }
        String summary = Files.readString(damaged.resolve("summary.json"));
        Files.writeString(damaged.resolve("summary.json"), summary.substring(0, summary.length() / 2));
        Result broken = diff(damaged.toString(), first.toString());
        assertEquals(2, broken.exit());
        assertEquals(1, broken.stderr().size(), String.join("\n", broken.stderr()));
        assertTrue(broken.stderr().getFirst().startsWith("infertop: " + damaged.resolve("summary.json")
                + ": truncated or not JSON"), broken.stderr().getFirst());

        // report still reads the snapshots diff reads.
        try (InfertopProcess report = InfertopProcess.start("report", first.toString())) {
            assertEquals(0, report.waitFor(60), report.stderrText());
        }
    }

    /**
     * llama-bench generating 64 tokens twice after its warm-up, one thread: a short run, a few seconds under infertop
     * (16 tokens once was too short on a loaded machine: a run's few preemptions outweighed F16 against Q4_0).
     */
    private static List<String> shortBench(Path model) {
        return List.of(llama.sourceBuildTool("llama-bench").toString(), "-m", model.toString(), "-p", "0", "-n", "64",
                "-r", "2", "-t", "1");
    }

    /** {@code diff --turns N} of two commands, its runs in {@code name} under the work directory. */
    private static Result turns(String name, int n, List<String> a, List<String> b, String... options)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("diff", "--turns", Integer.toString(n), "--warmup", "0",
                "--runs-dir", work.resolve(name).toString()));
        args.addAll(List.of(options));
        args.add("--");
        args.addAll(a);
        args.add("--vs");
        args.addAll(b);
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            int exit = infertop.waitFor(600);
            return new Result(exit, List.copyOf(infertop.stdout), List.copyOf(infertop.stderr));
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    @Test
    void theGateDecidesOrSaysItCannot() throws Exception {
        Path q4 = quantized("Q4_0");
        // The short pair: 3 × 48 tokens after the warm-up, 1 s intervals (infertop's default): a few intervals a
        // side. The Q4_0 copy is some 2× faster; the gate must not call that "no regression".
        List<Path> shortRuns = new ArrayList<>();
        for (String[] spec : new String[][] {{"short-q4", "q4"}, {"short-f16", "f16"}, {"short-f16-2", "f16"}}) {
            Path dir = work.resolve(spec[0]);
            try (InfertopProcess infertop = InfertopProcess.start("--json", "--budget", "0", "--snapshot-on-exit",
                    "--snapshot-dir", dir.toString(), "--", llama.sourceBuildTool("llama-bench").toString(), "-m",
                    (spec[1].equals("q4") ? q4 : f16).toString(), "-p", "0", "-n", "48", "-r", "3", "-t", "1")) {
                assertEquals(0, infertop.waitFor(180), infertop.stderrText());
            } finally {
                LeakCheck.assertNothingLeft();
            }
            shortRuns.add(dir);
        }
        Result shortPair = diff(shortRuns.get(0).toString(), shortRuns.get(1).toString(), "--fail-on", "5");
        System.out.println("diff: short Q4_0 -> F16, exit " + shortPair.exit() + "\n" + shortPair.text() + "\n"
                + String.join("\n", shortPair.stderr()));
        assertTrue(shortPair.exit() == 1 || shortPair.exit() == 3, "never a pass: exit " + shortPair.exit());
        assertEquals(1, shortPair.stderr().size(), String.join("\n", shortPair.stderr()));
        if (shortPair.exit() == 3) {
            String line = shortPair.stderr().getFirst();
            assertTrue(line.startsWith("infertop: undecided at 5.0% (") && (line.contains(" would decide it")
                    || line.contains("spread too widely")), line);
        }
        Result shortSame = diff(shortRuns.get(1).toString(), shortRuns.get(2).toString(), "--fail-on", "5");
        System.out.println("diff: short F16 -> F16, exit " + shortSame.exit() + ": "
                + String.join("\n", shortSame.stderr()));

        // In turns, eight a side (2/12870 at best per figure: Holm over this graph's figures leaves room for a few
        // runs that a burst of the machine's other work slowed): the regression is called between runs, the figures
        // being one value per run. Six a side were too few on a loaded 2-core VM.
        Result inTurns = turns("turns-q4-f16", 8, shortBench(q4), shortBench(f16), "--fail-on", "5", "--json",
                "--html", work.resolve("turns.html").toString());
        System.out.println("diff --turns 8: Q4_0 -> F16, exit " + inTurns.exit() + ": "
                + String.join("\n", inTurns.stderr()));
        JsonNode turnsDiff = inTurns.json();
        System.out.println(turnsDiff);
        assertEquals(1, inTurns.exit(), String.join("\n", inTurns.stderr()));
        assertEquals("mann-whitney-u over runs, holm-adjusted", turnsDiff.path("test").asText());
        assertEquals(8, turnsDiff.path("a_runs").size());
        assertEquals(work.resolve("turns-q4-f16").resolve("b8").toString(), turnsDiff.path("b_runs").path(7).asText());
        assertEquals("regression", turnsDiff.path("gate").asText());
        JsonNode decode = tokens(turnsDiff, "decode time per generated token");
        assertEquals(8, decode.path("runs_a").asInt(), decode.toString());
        assertTrue(turnsDiff.path("regressions").toString().contains("decode tokens/s"), turnsDiff.toString());
        assertTrue(inTurns.stderr().getLast().startsWith("infertop: regressed beyond 5.0%: decode tokens/s -"),
                inTurns.stderr().getLast());
        assertTrue(Files.readString(work.resolve("turns.html")).contains("run by run"), "html report");
        // The snapshots stay, and diff of them with --vs says what --turns said.
        List<String> again = new ArrayList<>();
        for (int i = 1; i <= 8; i++) {
            again.add(work.resolve("turns-q4-f16").resolve("a" + i).toString());
        }
        again.add("--vs");
        for (int i = 1; i <= 8; i++) {
            again.add(work.resolve("turns-q4-f16").resolve("b" + i).toString());
        }
        again.addAll(List.of("--fail-on", "5"));
        Result byHand = diff(again.toArray(String[]::new));
        assertEquals(1, byHand.exit(), byHand.text());
        assertTrue(byHand.text().startsWith("infertop diff  A 8 runs: "), byHand.text());

        // Two sets of runs of the same thing in turns, twice: Holm keeps "any figure significant" below 5 % a diff
        // where the runs are alike, so both trials flagged would happen less than once in 400. A trial that flags
        // nothing never says "regression".
        List<String> flagged = new ArrayList<>();
        for (int trial = 1; trial <= 2; trial++) {
            Result same = turns("turns-f16-f16-" + trial, 6, shortBench(f16), shortBench(f16), "--fail-on", "5",
                    "--json");
            JsonNode sameDiff = same.json();
            System.out.println("diff --turns 6: F16 -> F16, trial " + trial + ", exit " + same.exit() + ", "
                    + sameDiff.path("significant") + " of " + sameDiff.path("tested") + " significant: "
                    + same.stderr().getLast());
            if (sameDiff.path("significant").asInt() > 0) {
                flagged.add(sameDiff.toString());
            } else {
                assertTrue(same.exit() == 0 || same.exit() == 3, "exit " + same.exit());
            }
        }
        assertTrue(flagged.size() <= 1, "identical runs in turns called significant twice:\n"
                + String.join("\n", flagged));

        // Bad input: one line, exit 2.
        Result noVs = diff("--turns", "2", "--", "true");
        assertEquals(2, noVs.exit());
        assertEquals(List.of("infertop: --turns takes two commands after --: infertop diff --turns N -- COMMAND_A ... "
                + "--vs COMMAND_B ..."), noVs.stderr());
        Result three = diff(shortRuns.get(0).toString(), shortRuns.get(1).toString(), shortRuns.get(2).toString());
        assertEquals(2, three.exit());
        assertEquals(List.of("infertop: diff takes two runs (A B), or several a side (A1 A2 ... --vs B1 B2 ...), got 3"),
                three.stderr());
        Result failing = diff("--turns", "1", "--warmup", "0", "--runs-dir", work.resolve("turns-false").toString(),
                "--", "false", "--vs", "true");
        assertEquals(2, failing.exit(), String.join("\n", failing.stderr()));
        assertEquals(1, failing.stderr().size(), String.join("\n", failing.stderr()));
        assertTrue(failing.stderr().getFirst().startsWith("infertop: run a1 (false) failed (exit 1)"),
                failing.stderr().getFirst());
    }
}
