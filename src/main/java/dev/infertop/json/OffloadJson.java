package dev.infertop.json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema.OffloadBackendField;
import dev.infertop.model.JsonSchema.OffloadCopyField;
import dev.infertop.model.JsonSchema.OffloadDispatchField;
import dev.infertop.model.JsonSchema.OffloadField;
import dev.infertop.model.JsonSchema.OffloadStayedField;
import dev.infertop.model.JsonSchema.OffloadStayedNodeField;
import dev.infertop.model.JsonSchema.OffloadTokenField;
import dev.infertop.model.OffloadTotals;

/**
 * The object {@code "offload"} of each JSON line: per backend, enqueue time and (only where a synchronize closed
 * its work) device-complete time, the host's waits and the bytes copied in; then the copied tensors.
 */
final class OffloadJson {
    private OffloadJson() {}

    static void put(ObjectNode node, OffloadTotals offload) {
        ObjectNode backends = node.putObject(OffloadField.BACKENDS.key());
        for (OffloadTotals.Backend b : offload.backends()) {
            ObjectNode n = backends.putObject(b.backend());
            n.put(OffloadBackendField.COMPLETION.key(), b.completion().label());
            n.put(OffloadBackendField.GRAPHS.key(), b.graphs());
            n.put(OffloadBackendField.ENQUEUE_MS.key(), ms(b.enqueueNs()));
            n.put(OffloadBackendField.COMPLETED_GRAPHS.key(), b.completedGraphs());
            n.put(OffloadBackendField.COMPLETED_ENQUEUE_MS.key(), ms(b.completedEnqueueNs()));
            if (b.completion() == OffloadTotals.Completion.DEVICE_COMPLETE) {
                n.put(OffloadBackendField.DEVICE_COMPLETE_MS.key(), ms(b.deviceNs()));
            }
            n.put(OffloadBackendField.HOST_WAITS.key(), b.waits());
            n.put(OffloadBackendField.HOST_WAIT_MS.key(), ms(b.waitNs()));
            n.put(OffloadBackendField.COPIES_IN.key(), b.copiesIn());
            n.put(OffloadBackendField.BYTES_IN.key(), b.bytesIn());
            n.put(OffloadBackendField.COPY_MS.key(), ms(b.copyNs()));
            if (offload.copiesUnseen(b)) {
                n.put(OffloadBackendField.COPIES_UNSEEN.key(), true);
            } else if (b.graphs() > 0) {
                n.put(OffloadBackendField.BYTES_IN_PER_GRAPH.key(), perUnit(b.bytesInPerGraph()));
            }
        }
        ArrayNode copies = node.putArray(OffloadField.COPIES.key());
        for (OffloadTotals.Copy c : offload.copies()) {
            ObjectNode n = copies.addObject();
            n.put(OffloadCopyField.TENSOR.key(), c.tensor());
            n.put(OffloadCopyField.TO_BACKEND.key(), c.toBackend());
            n.put(OffloadCopyField.TYPE.key(), c.type());
            n.put(OffloadCopyField.SHAPE.key(), c.shape());
            n.put(OffloadCopyField.COPIES.key(), c.copies());
            n.put(OffloadCopyField.BYTES.key(), c.bytes());
            n.put(OffloadCopyField.COPY_MS.key(), ms(c.copyNs()));
        }
        node.put(OffloadField.COPIES_FOLDED.key(), offload.copiesFolded());
        ObjectNode dispatch = node.putObject(OffloadField.HOST_DISPATCH.key());
        for (OffloadTotals.Dispatch d : offload.dispatch()) {
            ObjectNode n = dispatch.putObject(d.backend());
            n.put(OffloadDispatchField.SUBMITS.key(), d.submits());
            n.put(OffloadDispatchField.SUBMIT_MS.key(), ms(d.submitNs()));
            n.put(OffloadDispatchField.FENCE_WAITS.key(), d.fenceWaits());
            n.put(OffloadDispatchField.FENCE_WAIT_MS.key(), ms(d.fenceWaitNs()));
        }
        putPerToken(node, offload.perToken(), offload.backendsWithCopiesUnseen());
        putStayed(node, offload.stayedOnCpu());
    }

    private static void putStayed(ObjectNode node, OffloadTotals.StayedOnCpu stayed) {
        ObjectNode n = node.putObject(OffloadField.STAYED_ON_CPU.key());
        n.put(OffloadStayedField.CPU_GRAPHS.key(), stayed.cpuGraphs());
        ObjectNode ops = n.putObject(OffloadStayedField.OPS_PER_GRAPH.key());
        if (stayed.cpuGraphs() > 0) {
            stayed.opsPerGraph().forEach((op, perGraph) -> ops.put(op, perUnit(perGraph)));
        }
        ArrayNode nodes = n.putArray(OffloadStayedField.NODES.key());
        for (OffloadTotals.StayedOnCpu.Node s : stayed.nodes()) {
            ObjectNode e = nodes.addObject();
            e.put(OffloadStayedNodeField.OP.key(), s.op());
            e.put(OffloadStayedNodeField.TENSOR.key(), s.tensor());
            e.put(OffloadStayedNodeField.SHAPE.key(), s.shape());
            e.put(OffloadStayedNodeField.RUNS.key(), s.runs());
            if (stayed.cpuGraphs() > 0) {
                e.put(OffloadStayedNodeField.RUNS_PER_GRAPH.key(), perUnit(stayed.runsPerGraph(s)));
            }
        }
        n.put(OffloadStayedField.NODES_FOLDED.key(), stayed.nodesFolded());
    }

    private static void putPerToken(ObjectNode node, OffloadTotals.TokenBytes t, java.util.List<String> unseen) {
        ObjectNode n = node.putObject(OffloadField.PER_TOKEN.key());
        if (!unseen.isEmpty()) {
            // Some copies went unseen: the bytes seen are a part, and no per-token figure is given.
            ArrayNode into = n.putArray(OffloadTokenField.COPIES_UNSEEN_INTO.key());
            unseen.forEach(into::add);
        }
        boolean known = unseen.isEmpty();
        n.put(OffloadTokenField.PROMPT_TOKENS.key(), t.promptTokens());
        n.put(OffloadTokenField.PROMPT_BYTES_IN.key(), t.promptBytes());
        if (known && t.promptTokens() > 0) {
            n.put(OffloadTokenField.BYTES_IN_PER_PROMPT_TOKEN.key(), perUnit(t.bytesPerPromptToken()));
        }
        n.put(OffloadTokenField.GENERATED_TOKENS.key(), t.generatedTokens());
        n.put(OffloadTokenField.GENERATED_BYTES_IN.key(), t.generatedBytes());
        if (known && t.generatedTokens() > 0) {
            n.put(OffloadTokenField.BYTES_IN_PER_GENERATED_TOKEN.key(), perUnit(t.bytesPerGeneratedToken()));
        }
    }

    /** Bytes per unit to three decimals: exact where the division is. */
    private static double perUnit(double bytes) {
        return Math.round(bytes * 1e3) / 1e3;
    }

    private static double ms(long ns) {
        return Math.round(ns / 1e3) / 1e3;
    }
}
