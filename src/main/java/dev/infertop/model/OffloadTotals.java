package dev.infertop.model;

import java.util.List;

/**
 * What offloading cost over some span: per backend, its graphs' enqueue time (the compute call) next to their
 * device-complete time (to the host's next synchronize of that backend), the host's waits for it and the bytes
 * copied into it; and the tensors the scheduler copied between backends.
 *
 * @param copiesFolded copies of tensors past the table's cap, counted in their backend's figures only
 * @param dispatch     per backend that dispatches from the host in its own code (Vulkan), that dispatch
 */
public record OffloadTotals(List<Backend> backends, List<Copy> copies, long copiesFolded, List<Dispatch> dispatch) {
    public static final OffloadTotals EMPTY = new OffloadTotals(List.of(), List.of(), 0);

    public OffloadTotals {
        backends = List.copyOf(backends);
        copies = List.copyOf(copies);
        dispatch = List.copyOf(dispatch);
    }

    /** Without host dispatch figures (no backend probed for them). */
    public OffloadTotals(List<Backend> backends, List<Copy> copies, long copiesFolded) {
        this(backends, copies, copiesFolded, List.of());
    }

    /**
     * A backend's host dispatch in its compute calls and synchronizes (Vulkan: ggml_vk_submit per batch of
     * recorded nodes, ggml_vk_wait_for_fence): host time, part of enqueue or host-wait time, never device time.
     */
    public record Dispatch(String backend, long submits, long submitNs, long fenceWaits, long fenceWaitNs) {}

    /** How a backend's end of work is known. */
    public enum Completion {
        /** Its compute call returns once the work is queued; the work ends at the next synchronize seen. */
        DEVICE_COMPLETE("device-complete"),
        /** Graphs were computed there, but no synchronize of it was seen: only the enqueue time is known. */
        ENQUEUE_ONLY("enqueue only"),
        /** The CPU (and BLAS) compute in the call itself: enqueue time is the compute time. */
        IN_CALL("computes in the call");

        private final String label;

        Completion(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * @param graphs             graph computes on this backend
     * @param enqueueNs          time in their compute calls (ggml_backend_graph_compute_async, entry to return)
     * @param completedGraphs    those a synchronize of this backend closed
     * @param completedEnqueueNs enqueue time of the completed graphs
     * @param deviceNs           per run of queued graphs, first compute's entry to the closing synchronize's
     *                           return: an upper bound of the device's time (it may have finished before the host
     *                           asked); 0 unless {@link Completion#DEVICE_COMPLETE}
     * @param waits              synchronize calls of this backend
     * @param waitNs             time the host spent in them
     * @param copiesIn           tensors copied into this backend (by the destination copy's name)
     * @param bytesIn            their bytes
     * @param copyNs             time the host spent in those copy calls
     */
    public record Backend(String backend, Completion completion, long graphs, long enqueueNs, long completedGraphs,
                          long completedEnqueueNs, long deviceNs, long waits, long waitNs, long copiesIn,
                          long bytesIn, long copyNs) {}

    /**
     * One tensor the scheduler copied to {@code toBackend}: its name, type id, shape, how often and how many bytes.
     */
    public record Copy(String tensor, String toBackend, int type, String shape, long copies, long bytes, long copyNs) {}

    /** The backend's figures, or null. */
    public Backend backend(String name) {
        for (Backend b : backends) {
            if (b.backend().equals(name)) {
                return b;
            }
        }
        return null;
    }
}
