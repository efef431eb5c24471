package dev.infertop.cli;

import dev.infertop.process.LaunchedCommand;
import dev.infertop.process.ProcessCpuTime;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.JsonSchema;
import dev.infertop.ffi.OwnPriority;
import dev.infertop.session.Preflight;
import dev.infertop.session.UserError;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code infertop overhead [OPTIONS] -- COMMAND}: what does profiling cost here? Runs the command alternately
 * without and with infertop attached (interleaved ABBA pairs, so drift hits both sides alike), and reports the
 * slowdown ratio with its spread and the target's CPU time per token either way.
 */
@Command(name = "overhead", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Measure infertop's cost on COMMAND: run it alternately without",
                "and with infertop (interleaved pairs); print the decode slowdown (when",
                "COMMAND is llama-bench), the target's CPU time per token and infertop's",
                "own CPU time, as medians with their spread."})
final class OverheadCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern BENCH_ROW = Pattern.compile("\\|\\s*(tg\\d+|pp\\d+|pp\\d+\\+tg\\d+)\\s*\\|\\s*([0-9.]+)\\s*±\\s*([0-9.]+)\\s*\\|");
    private static final Pattern TRACING = Pattern.compile("infertop: tracing pid (\\d+)");

    @Option(names = "--pairs", paramLabel = "N", defaultValue = "5",
            description = "Pairs of runs (with and without infertop) (default: ${DEFAULT-VALUE}, at least 1).")
    int pairs;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "1",
            description = "Pairs run first and not counted: page cache, CPU frequency and infertop's own start-up cache settle (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--layers", paramLabel = "LIST", defaultValue = "token,graph,operator",
            description = "Layers infertop attaches in the traced runs (default: ${DEFAULT-VALUE}).")
    String layers;

    @Option(names = "--json", description = "Print the result as one JSON object.")
    boolean json;

    @Parameters(paramLabel = "COMMAND", arity = "1..*", description = "After --: the workload, e.g. llama-bench ...")
    List<String> command = new ArrayList<>();

    /**
     * One run: llama-bench's decode tokens/s, the target's CPU seconds, infertop's own CPU seconds (its whole JVM:
     * collector, JIT, GC; 0 without infertop), and generated tokens when infertop saw them.
     */
    record Run(boolean traced, double decodeTokensPerSecond, double cpuSeconds, double infertopCpuSeconds,
               long tokensDecode, long wallNs) {}

    @Override
    public Integer call() throws Exception {
        if (pairs < 1 || pairs > 1000) {
            throw new UserError("--pairs must be between 1 and 1000, got " + pairs, 2);
        }
        if (warmup < 0 || warmup > 100) {
            throw new UserError("--warmup must be between 0 and 100, got " + warmup, 2);
        }
        Preflight.requirePrivileges();
        Turns.Runs<Run> runs = Turns.alternate(pairs, warmup, (withInfertop, pair) -> {
            Run run = withInfertop ? runTraced() : runPlain();
            System.err.printf(Locale.ROOT, "infertop overhead: %s %s: %.2f tok/s, %.2f s CPU, infertop %.2f s CPU%n",
                    pair < 0 ? "warm-up (not counted)" : String.format(Locale.ROOT, "pair %d/%d", pair + 1, pairs),
                    withInfertop ? "with infertop   " : "without infertop", run.decodeTokensPerSecond(),
                    run.cpuSeconds(), run.infertopCpuSeconds());
            return run;
        });
        List<Run> plain = runs.first();
        List<Run> traced = runs.second();
        report(plain, traced);
        return 0;
    }

    private Run runPlain() throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.PIPE)
                .redirectErrorStream(true);
        // The environment the traced run's command gets (infertop launches it with no more), so both runs compare.
        builder.environment().clear();
        builder.environment().putAll(LaunchedCommand.environment(System.getenv(), null,
                java.util.Map.of()));
        Process process = OwnPriority.start(builder);
        return measure(process, false, (int) process.pid(), -1);
    }

    private Run runTraced() throws IOException, InterruptedException {
        // What src/scripts/infertop runs, so the cost measured is the one users get.
        List<String> argv = Turns.infertopOn(List.of("--json", "-d", "1", "--layers", layers), command);
        Process process = OwnPriority.start(new ProcessBuilder(argv).redirectErrorStream(false));
        return measure(process, true, -1, (int) process.pid());
    }

    /**
     * Reads the output, samples the target's CPU time from /proc every 10 ms (its last sample before exit is
     * what it used, within 10 ms), and parses llama-bench's tg figure.
     */
    private Run measure(Process process, boolean traced, int knownTargetPid, int infertopPid)
            throws IOException, InterruptedException {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        List<String> jsonLines = Collections.synchronizedList(new ArrayList<>());
        int[] targetPid = {knownTargetPid};
        Thread errors = Thread.ofVirtual().start(() -> readLines(new BufferedReader(new InputStreamReader(
                process.getErrorStream(), StandardCharsets.UTF_8)), line -> {
            lines.add(line);
            Matcher matcher = TRACING.matcher(line);
            if (matcher.find()) {
                targetPid[0] = Integer.parseInt(matcher.group(1));
            }
        }));
        Thread output = Thread.ofVirtual().start(() -> readLines(process.inputReader(StandardCharsets.UTF_8),
                traced ? jsonLines::add : lines::add));
        long startNs = System.nanoTime();
        double cpuSeconds = 0;
        double infertopCpuSeconds = 0;
        while (!process.waitFor(10, TimeUnit.MILLISECONDS)) {
            if (targetPid[0] > 0) {
                cpuSeconds = Math.max(cpuSeconds, cpuSecondsOf(targetPid[0]));
            }
            if (infertopPid > 0) {
                infertopCpuSeconds = Math.max(infertopCpuSeconds, cpuSecondsOf(infertopPid));
            }
        }
        long wallNs = System.nanoTime() - startNs;
        errors.join();
        output.join();
        if (process.exitValue() != 0) {
            throw new UserError((traced ? "infertop" : command.getFirst()) + " failed (exit " + process.exitValue()
                    + "): " + (lines.isEmpty() ? "no output" : lines.getLast()));
        }
        double tokensPerSecond = 0;
        for (String line : lines) {
            Matcher matcher = BENCH_ROW.matcher(line);
            if (matcher.find() && matcher.group(1).startsWith("tg")) {
                tokensPerSecond = Double.parseDouble(matcher.group(2));
            }
        }
        long tokensDecode = 0;
        if (traced && !jsonLines.isEmpty()) {
            JsonNode last = JSON.readTree(jsonLines.getLast());
            tokensDecode = last.path(JsonSchema.TOKENS_DECODE.key()).asLong();
        }
        return new Run(traced, tokensPerSecond, cpuSeconds, infertopCpuSeconds, tokensDecode, wallNs);
    }

    private static void readLines(BufferedReader reader, java.util.function.Consumer<String> sink) {
        try (reader) {
            String line;
            while ((line = reader.readLine()) != null) {
                sink.accept(line);
            }
        } catch (IOException e) {
            // the process closed its end
        }
    }

    /** utime + stime of every thread of the process, from /proc/PID/stat (fields 14 and 15, clock ticks). */
    static double cpuSecondsOf(int pid) {
        try {
            return ProcessCpuTime.ns(pid) / 1e9;
        } catch (IOException e) {
            return 0; // gone between samples
        }
    }

    private void report(List<Run> plain, List<Run> traced) throws IOException {
        double[] ratios = new double[plain.size()];
        for (int i = 0; i < plain.size(); i++) {
            double base = plain.get(i).decodeTokensPerSecond();
            ratios[i] = base > 0 ? traced.get(i).decodeTokensPerSecond() / base : Double.NaN;
        }
        long tokens = traced.stream().mapToLong(Run::tokensDecode).max().orElse(0);
        double[] cpuPlain = plain.stream().mapToDouble(Run::cpuSeconds).toArray();
        double[] cpuTraced = traced.stream().mapToDouble(Run::cpuSeconds).toArray();
        double[] cpuInfertop = traced.stream().mapToDouble(Run::infertopCpuSeconds).toArray();
        boolean bench = Arrays.stream(ratios).noneMatch(Double::isNaN);
        if (json) {
            var root = JSON.createObjectNode();
            root.put("pairs", plain.size());
            root.put("warmup_pairs", warmup);
            root.put("layers", layers);
            if (bench) {
                root.put("decode_ratio_median", median(ratios));
                root.put("decode_ratio_min", Arrays.stream(ratios).min().orElse(0));
                root.put("decode_ratio_max", Arrays.stream(ratios).max().orElse(0));
                var pairsNode = root.putArray("decode_tokens_per_s");
                for (int i = 0; i < plain.size(); i++) {
                    pairsNode.addArray().add(plain.get(i).decodeTokensPerSecond()).add(traced.get(i).decodeTokensPerSecond());
                }
            }
            root.put("target_cpu_s_median_without", median(cpuPlain));
            root.put("target_cpu_s_median_with", median(cpuTraced));
            root.put("infertop_cpu_s_median", median(cpuInfertop));
            root.put("infertop_cpu_s_min", Arrays.stream(cpuInfertop).min().orElse(0));
            root.put("infertop_cpu_s_max", Arrays.stream(cpuInfertop).max().orElse(0));
            if (tokens > 0) {
                root.put("tokens_decode", tokens);
                root.put("target_cpu_ms_per_token_without", 1000 * median(cpuPlain) / tokens);
                root.put("target_cpu_ms_per_token_with", 1000 * median(cpuTraced) / tokens);
                root.put("infertop_cpu_ms_per_token", 1000 * median(cpuInfertop) / tokens);
            }
            System.out.println(root);
            return;
        }
        System.out.printf(Locale.ROOT, "infertop overhead: %d interleaved pairs, layers %s%n", plain.size(), layers);
        if (bench) {
            System.out.printf(Locale.ROOT, "  decode tokens/s   with/without: median %.4f (slowdown %.2f %%), pairs ranged %.4f to %.4f%n",
                    median(ratios), 100 * (1 - median(ratios)), Arrays.stream(ratios).min().orElse(0),
                    Arrays.stream(ratios).max().orElse(0));
            System.out.printf(Locale.ROOT, "  decode tokens/s   without: median %.2f; with: median %.2f%n",
                    median(plain.stream().mapToDouble(Run::decodeTokensPerSecond).toArray()),
                    median(traced.stream().mapToDouble(Run::decodeTokensPerSecond).toArray()));
        } else {
            System.out.println("  (no llama-bench tg figure in the output: speed ratio not available)");
        }
        System.out.printf(Locale.ROOT, "  target CPU        without: median %.2f s; with: median %.2f s", median(cpuPlain),
                median(cpuTraced));
        if (tokens > 0) {
            System.out.printf(Locale.ROOT, "  (%.3f vs %.3f ms per generated token, %d tokens)", 1000 * median(cpuPlain) / tokens,
                    1000 * median(cpuTraced) / tokens, tokens);
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "  infertop's own CPU  median %.2f s (runs %.2f to %.2f s)", median(cpuInfertop),
                Arrays.stream(cpuInfertop).min().orElse(0), Arrays.stream(cpuInfertop).max().orElse(0));
        if (tokens > 0) {
            System.out.printf(Locale.ROOT, "  (%.3f ms per generated token)", 1000 * median(cpuInfertop) / tokens);
        }
        System.out.println();
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return 0;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
