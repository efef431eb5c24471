package dev.infertop.snapshot;

import dev.infertop.model.JsonSchema;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.JsonSchema.OffloadBackendField;
import dev.infertop.model.JsonSchema.OffloadCopyField;
import dev.infertop.model.JsonSchema.OffloadDispatchField;
import dev.infertop.model.JsonSchema.OffloadField;
import dev.infertop.model.JsonSchema.OffloadStayedField;
import dev.infertop.model.JsonSchema.OffloadStayedNodeField;
import dev.infertop.model.JsonSchema.OffloadTokenField;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.SafeText;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * summary.json's {@code offload} back into figures, for a replay's backends panel. The file is someone else's:
 * names are sanitised, counts kept to the collector's caps, a figure that is not a non-negative number reads 0,
 * and a completion this build does not know reads "enqueue only" (what is known is then the compute calls).
 */
final class OffloadSummary {
    private static final int MAX_BACKENDS = 17;
    private static final int MAX_COPIES = 256;
    private static final int MAX_CPU_NODES = 256;

    private OffloadSummary() {}

    static OffloadTotals totals(JsonNode s) {
        JsonNode offload = s.path(JsonSchema.OFFLOAD.key());
        if (!offload.isObject()) {
            return OffloadTotals.EMPTY;
        }
        List<OffloadTotals.Backend> backends = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = offload.path(OffloadField.BACKENDS.key()).fields();
             it.hasNext() && backends.size() < MAX_BACKENDS; ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode b = entry.getValue();
            backends.add(new OffloadTotals.Backend(SafeText.of(entry.getKey()),
                    completion(b.path(OffloadBackendField.COMPLETION.key()).asText("")),
                    count(b, OffloadBackendField.GRAPHS.key()), ns(b, OffloadBackendField.ENQUEUE_MS.key()),
                    count(b, OffloadBackendField.COMPLETED_GRAPHS.key()),
                    ns(b, OffloadBackendField.COMPLETED_ENQUEUE_MS.key()),
                    ns(b, OffloadBackendField.DEVICE_COMPLETE_MS.key()), count(b, OffloadBackendField.HOST_WAITS.key()),
                    ns(b, OffloadBackendField.HOST_WAIT_MS.key()), count(b, OffloadBackendField.COPIES_IN.key()),
                    count(b, OffloadBackendField.BYTES_IN.key()), ns(b, OffloadBackendField.COPY_MS.key())));
        }
        List<OffloadTotals.Copy> copies = new ArrayList<>();
        for (JsonNode c : offload.path(OffloadField.COPIES.key())) {
            if (copies.size() == MAX_COPIES) {
                break;
            }
            copies.add(new OffloadTotals.Copy(SafeText.of(c.path(OffloadCopyField.TENSOR.key()).asText("")),
                    SafeText.of(c.path(OffloadCopyField.TO_BACKEND.key()).asText("")),
                    (int) Math.min(Integer.MAX_VALUE, count(c, OffloadCopyField.TYPE.key())),
                    SafeText.of(c.path(OffloadCopyField.SHAPE.key()).asText("")),
                    count(c, OffloadCopyField.COPIES.key()), count(c, OffloadCopyField.BYTES.key()),
                    ns(c, OffloadCopyField.COPY_MS.key())));
        }
        List<OffloadTotals.Dispatch> dispatch = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = offload.path(OffloadField.HOST_DISPATCH.key()).fields();
             it.hasNext() && dispatch.size() < MAX_BACKENDS; ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode d = entry.getValue();
            dispatch.add(new OffloadTotals.Dispatch(SafeText.of(entry.getKey()),
                    count(d, OffloadDispatchField.SUBMITS.key()), ns(d, OffloadDispatchField.SUBMIT_MS.key()),
                    count(d, OffloadDispatchField.FENCE_WAITS.key()), ns(d, OffloadDispatchField.FENCE_WAIT_MS.key())));
        }
        JsonNode t = offload.path(OffloadField.PER_TOKEN.key());
        OffloadTotals.TokenBytes perToken = new OffloadTotals.TokenBytes(
                count(t, OffloadTokenField.PROMPT_TOKENS.key()), count(t, OffloadTokenField.PROMPT_BYTES_IN.key()),
                count(t, OffloadTokenField.GENERATED_TOKENS.key()),
                count(t, OffloadTokenField.GENERATED_BYTES_IN.key()));
        JsonNode st = offload.path(OffloadField.STAYED_ON_CPU.key());
        List<OffloadTotals.StayedOnCpu.Node> stayed = new ArrayList<>();
        for (JsonNode n : st.path(OffloadStayedField.NODES.key())) {
            if (stayed.size() == MAX_CPU_NODES) {
                break;
            }
            stayed.add(new OffloadTotals.StayedOnCpu.Node(SafeText.of(n.path(OffloadStayedNodeField.OP.key()).asText("")),
                    SafeText.of(n.path(OffloadStayedNodeField.TENSOR.key()).asText("")),
                    SafeText.of(n.path(OffloadStayedNodeField.SHAPE.key()).asText("")),
                    count(n, OffloadStayedNodeField.RUNS.key())));
        }
        OffloadTotals.StayedOnCpu onCpu = new OffloadTotals.StayedOnCpu(count(st, OffloadStayedField.CPU_GRAPHS.key()),
                stayed, count(st, OffloadStayedField.NODES_FOLDED.key()));
        return new OffloadTotals(backends, copies, count(offload, OffloadField.COPIES_FOLDED.key()), dispatch,
                perToken, onCpu);
    }

    private static OffloadTotals.Completion completion(String label) {
        for (OffloadTotals.Completion c : OffloadTotals.Completion.values()) {
            if (c.label().equals(label)) {
                return c;
            }
        }
        return OffloadTotals.Completion.ENQUEUE_ONLY;
    }

    private static long count(JsonNode node, String key) {
        JsonNode v = node.path(key);
        return v.isNumber() && v.asDouble() >= 0 && Double.isFinite(v.asDouble()) ? v.asLong() : 0;
    }

    private static long ns(JsonNode node, String key) {
        JsonNode v = node.path(key);
        double ms = v.isNumber() ? v.asDouble() : 0;
        return Double.isFinite(ms) && ms >= 0 && ms < 9e12 ? Math.round(ms * 1e6) : 0;
    }
}
