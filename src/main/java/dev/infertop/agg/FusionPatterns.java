package dev.infertop.agg;

import dev.infertop.agg.graph.FusionRule;
import dev.infertop.process.layout.OpTable;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Which runs of consecutive graph nodes the target's CPU node loop may run as one fused op, read from the
 * names of the fused-op functions its loop calls: {@code ggml_compute_forward_rms_norm_mul_fused} fuses an
 * RMS_NORM node with the MUL node right after it. The op names are the target's own (its op table), so a
 * release that adds a fusion is understood when its function follows the naming; one that does not is not
 * understood, and its fused calls are then probed.
 *
 * <p>Why: the fused calls are the only way the probes learn which nodes ran as one group, and probing them
 * costs a trap per fused call per thread (about a tenth of the operator layer's probe hits on a llama-style
 * model; measurements.md). With the patterns known, the operator layer works the groups out from the graph it read and
 * checks them against each thread's barrier count, which must then match exactly
 * ({@link dev.infertop.agg.graph.CpuGraphAssembler}).
 * Thread-safe: libraries (and their fused functions) can be found while the collector reads.
 */
public final class FusionPatterns implements FusionRule {
    private static final String PREFIX = "ggml_compute_forward_";
    private static final String SUFFIX = "_fused";

    private final OpTable ops;
    private final List<int[]> patterns = new CopyOnWriteArrayList<>();
    private final List<String> names = new CopyOnWriteArrayList<>();

    public FusionPatterns(OpTable ops) {
        this.ops = ops;
    }

    /**
     * Adds the patterns of these fused-op functions; false when one of them cannot be read as a run of two or
     * more of the target's ops, in exactly one way (then the fused calls must be probed to be known).
     */
    public synchronized boolean learn(Collection<String> functionNames) {
        List<int[]> learned = new ArrayList<>();
        for (String function : functionNames) {
            int[] pattern = parse(function);
            if (pattern == null) {
                return false;
            }
            learned.add(pattern);
        }
        for (int[] pattern : learned) {
            if (patterns.stream().noneMatch(p -> java.util.Arrays.equals(p, pattern))) {
                patterns.add(pattern);
                names.add(describe(pattern));
            }
        }
        return true;
    }

    /** The op numbers of each fused run known, e.g. {RMS_NORM, MUL}. */
    @Override
    public List<int[]> patterns() {
        return patterns;
    }

    /** The runs known, as "RMS_NORM+MUL", comma-separated. */
    public String describe() {
        return String.join(", ", names);
    }

    private String describe(int[] pattern) {
        StringBuilder text = new StringBuilder();
        for (int op : pattern) {
            text.append(text.isEmpty() ? "" : "+").append(ops.name(op));
        }
        return text.toString();
    }

    /** {@code ggml_compute_forward_<op>_<op>..._fused} as op numbers, or null if not exactly one reading. */
    int[] parse(String function) {
        int cut = function.indexOf('.');
        String name = cut < 0 ? function : function.substring(0, cut); // clones: name.isra.0
        if (!name.startsWith(PREFIX) || !name.endsWith(SUFFIX)) {
            return null;
        }
        String body = name.substring(PREFIX.length(), name.length() - SUFFIX.length());
        List<int[]> readings = new ArrayList<>();
        read(body, new ArrayList<>(), readings);
        return readings.size() == 1 && readings.get(0).length >= 2 ? readings.get(0) : null;
    }

    /** Every way {@code rest} splits into op names joined by '_' (at most two kept: one is all that counts). */
    private void read(String rest, List<Integer> sofar, List<int[]> readings) {
        if (rest.isEmpty()) {
            readings.add(sofar.stream().mapToInt(Integer::intValue).toArray());
            return;
        }
        for (int op = 0; op < ops.count() && readings.size() < 2; op++) {
            String opName = ops.name(op).toLowerCase(Locale.ROOT);
            if (opName.isEmpty() || !rest.startsWith(opName)) {
                continue;
            }
            String after = rest.substring(opName.length());
            if (after.isEmpty() || after.startsWith("_")) {
                sofar.add(op);
                read(after.isEmpty() ? after : after.substring(1), sofar, readings);
                sofar.remove(sofar.size() - 1);
            }
        }
    }
}
