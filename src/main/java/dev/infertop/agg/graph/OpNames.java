package dev.infertop.agg.graph;

import dev.infertop.model.Other;

import java.util.HashMap;
import java.util.Map;

/**
 * The op names node groups are known by, bounded. The target chooses its nodes' op ids (one outside its own
 * op table is named "op#N") and which nodes it fuses ("A+B+C"): every layer keys figures by these names
 * (operator, sched, counters, roofline, the flight recorder's labels, the exported op series), so they are
 * capped once, here, where groups are named. Past {@link #MAX_OP_NAMES} a new name is {@link Other#NAME}
 * (one more key, so the groups still add up).
 * ggml has about a hundred ops and two dozen unary/GLU variants, a model runs 20 to 40 of them and fuses a
 * handful of patterns: a real run names far fewer than the cap, which bounds each layer's per-op figures (an
 * op's histograms are up to ~150 KB where its times spread over every bucket).
 */
final class OpNames {
    static final int MAX_OP_NAMES = 128;

    private final Map<String, String> kept = new HashMap<>();

    /** {@code name} as kept, or null when it is new and the cap is reached (the caller names it "other"). */
    String intern(String name) {
        String known = kept.get(name);
        if (known != null) {
            return known;
        }
        if (kept.size() >= MAX_OP_NAMES) {
            return null;
        }
        kept.put(name, name);
        return name;
    }

    int size() {
        return kept.size();
    }
}
