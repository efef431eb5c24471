package dev.infertop.diff;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Two runs made by hand, with round numbers, as RunLoader would read them. */
final class DiffFixtures {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DiffFixtures() {}

    /**
     * A run that generated 100 tokens (no prompt) at {@code decodeRate} tok/s in 100 decode graphs, every graph
     * traced: MUL_MAT 15 calls a token of {@code mulMatMsPerToken} ms a token, ADD 4 calls of 1 ms a token; 10
     * intervals whose samples are the run's figures plus 0.001·i (so two runs' samples never tie).
     */
    static RunRecord run(String name, double decodeRate, double mulMatMsPerToken, double sampleOffset) {
        return run(name, decodeRate, mulMatMsPerToken, sampleOffset, 10);
    }

    /** As above with {@code count} intervals. */
    static RunRecord run(String name, double decodeRate, double mulMatMsPerToken, double sampleOffset, int count) {
        ObjectNode t = JSON.createObjectNode();
        t.put("command", "llama-bench");
        t.put("model", "/models/m.gguf");
        t.put("tokens_decode", 100);
        t.put("tokens_prefill", 0);
        t.put("decode_tokens_per_s", decodeRate);
        t.put("prefill_tokens_per_s", 0.0);
        t.putObject("tpot_ms").put("count", 100).put("p50", 1000 / decodeRate).put("p99", 2000 / decodeRate);
        t.putObject("ttft_ms").put("count", 0);
        t.put("op_graphs", 100);
        t.put("cpu_graph_computes", 100);
        ObjectNode ops = t.putObject("ops");
        ops.putObject("MUL_MAT").put("groups", 1500).put("nodes", 1500).put("wall_ms", mulMatMsPerToken * 100)
                .put("barrier_wait_ms", 0.0).put("p50_ms", mulMatMsPerToken / 15).put("p99_ms", mulMatMsPerToken / 5)
                .put("last_shape", "ffn_up-0 [2816,1,1,1]");
        ops.putObject("ADD").put("groups", 400).put("nodes", 400).put("wall_ms", 100.0).put("barrier_wait_ms", 0.0)
                .put("p50_ms", 0.25).put("p99_ms", 0.5).put("last_shape", "l_out-1 [1024,1,1,1]");
        t.putObject("threads").putObject("4242").put("barrier_wait_ms", 0.0);
        t.putObject("layers").putObject("operator").put("state", "on");
        Map<String, List<RunRecord.Interval>> intervals = new LinkedHashMap<>();
        List<RunRecord.Interval> tpot = new ArrayList<>();
        List<RunRecord.Interval> mulMat = new ArrayList<>();
        List<RunRecord.Interval> add = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            tpot.add(new RunRecord.Interval(i * 0.2, 10, 1000 / decodeRate + sampleOffset + 0.001 * i));
            mulMat.add(new RunRecord.Interval(i * 0.2, 150, mulMatMsPerToken / 15 + (sampleOffset + 0.001 * i) / 15));
            // ADD: the same per-call times in every run, apart from the offset's tiny share: interleaved ranks
            add.add(new RunRecord.Interval(i * 0.2, 40, 0.25 + 0.0001 * ((i * 7 + (int) (sampleOffset * 1000)) % 10)));
        }
        intervals.put("tpot", tpot);
        intervals.put("op:MUL_MAT", mulMat);
        intervals.put("op:ADD", add);
        return new RunRecord(Path.of(name), "json log", t, MissingNode.getInstance(), intervals, Map.of());
    }

    static RunDiff diff(RunRecord a, RunRecord b) throws DiffInputException {
        return RunDiff.of(new RunMetrics(a), new RunMetrics(b));
    }

    /** Several runs a side, "large" from {@code largePercent}. */
    static RunDiff diff(List<RunRecord> a, List<RunRecord> b, double largePercent) throws DiffInputException {
        return RunDiff.of(a.stream().map(RunMetrics::new).toList(), b.stream().map(RunMetrics::new).toList(),
                largePercent);
    }

    /**
     * Runs as {@link #run} at these decode rates (tok/s), MUL_MAT taking 60 % of each token; {@code ops} false
     * leaves them without op figures (decode the only tested figure).
     */
    static List<RunRecord> runs(String prefix, boolean ops, double... decodeRates) {
        List<RunRecord> runs = new ArrayList<>();
        for (int i = 0; i < decodeRates.length; i++) {
            RunRecord run = run(prefix + (i + 1), decodeRates[i], 600 / decodeRates[i], 0.0001 * i);
            if (!ops) {
                ((ObjectNode) run.totals()).put("op_graphs", 0);
            }
            runs.add(run);
        }
        return runs;
    }
}
