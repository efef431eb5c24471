package dev.infertop.json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema.OffloadBackendField;
import dev.infertop.model.JsonSchema.OffloadCopyField;
import dev.infertop.model.JsonSchema.OffloadDispatchField;
import dev.infertop.model.JsonSchema.OffloadField;
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
    }

    private static double ms(long ns) {
        return Math.round(ns / 1e3) / 1e3;
    }
}
