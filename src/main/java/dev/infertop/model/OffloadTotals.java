package dev.infertop.model;

import java.util.List;

/**
 * What offloading cost over some span: per backend, its graphs' enqueue time (the compute call) next to their
 * device-complete time (to the host's next synchronize of that backend), the host's waits for it and the bytes
 * copied into it; and the tensors the scheduler copied between backends.
 *
 * @param copiesFolded copies of tensors past the table's cap, counted in their backend's figures only
 * @param dispatch     per backend that dispatches from the host in its own code (Vulkan), that dispatch
 * @param perToken     the bytes copied in the llama_decode calls that ended in the span, by their tokens
 * @param stayedOnCpu  the nodes the CPU ran in graphs of a run that offloaded to another backend
 */
public record OffloadTotals(List<Backend> backends, List<Copy> copies, long copiesFolded, List<Dispatch> dispatch,
                            TokenBytes perToken, StayedOnCpu stayedOnCpu) {
    public static final OffloadTotals EMPTY = new OffloadTotals(List.of(), List.of(), 0);

    public OffloadTotals {
        backends = List.copyOf(backends);
        copies = List.copyOf(copies);
        dispatch = List.copyOf(dispatch);
        perToken = perToken == null ? TokenBytes.NONE : perToken;
        stayedOnCpu = stayedOnCpu == null ? StayedOnCpu.NONE : stayedOnCpu;
    }

    /** Without per-token figures nor the CPU's nodes (a snapshot written before they existed). */
    public OffloadTotals(List<Backend> backends, List<Copy> copies, long copiesFolded, List<Dispatch> dispatch) {
        this(backends, copies, copiesFolded, dispatch, TokenBytes.NONE, StayedOnCpu.NONE);
    }

    /**
     * What stayed on the CPU once another backend computed graphs: the CPU graphs (the scheduler's CPU splits) the
     * operator layer read from then on, and their computing nodes by tensor name and op, with the shape of the
     * first seen. Empty without the operator layer (it reads the CPU's nodes) or before a device computed.
     *
     * @param cpuGraphs  CPU graphs read while offloading
     * @param nodes      their nodes by name and op, most run first
     * @param nodesFolded computing nodes past the table's cap or a graph's first {@code MAX} read: counted only here
     */
    public record StayedOnCpu(long cpuGraphs, List<Node> nodes, long nodesFolded) {
        public static final StayedOnCpu NONE = new StayedOnCpu(0, List.of(), 0);

        public StayedOnCpu {
            nodes = List.copyOf(nodes);
        }

        /** One tensor the CPU computed: its op, name, shape ("ne0xne1xne2xne3") and how often it ran. */
        public record Node(String op, String tensor, String shape, long runs) {}

        /** Runs of {@code node} per CPU graph; NaN without graphs. */
        public double runsPerGraph(Node node) {
            return cpuGraphs == 0 ? Double.NaN : (double) node.runs() / cpuGraphs;
        }

        /** The op mix: computing nodes per CPU graph by op (folded nodes apart), most first. */
        public java.util.Map<String, Double> opsPerGraph() {
            java.util.Map<String, Long> runs = new java.util.LinkedHashMap<>();
            for (Node n : nodes) {
                runs.merge(n.op(), n.runs(), Long::sum);
            }
            java.util.Map<String, Double> perGraph = new java.util.LinkedHashMap<>();
            runs.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                    .forEach(e -> perGraph.put(e.getKey(), cpuGraphs == 0 ? Double.NaN
                            : (double) e.getValue() / cpuGraphs));
            return perGraph;
        }
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

    /**
     * What crossed between backends per token: the bytes of every copy the scheduler made in a llama_decode call,
     * given to that call's tokens when it returned. A call of one token decodes a generated token, a call of more
     * decodes prompt tokens (llama_batch_get_one's rule; a server's batch that mixes both counts as prompt).
     * Copies outside llama_decode (an encoder's llama_encode, a program's own graphs) are in no token's figure.
     *
     * @param promptTokens    tokens of the calls of more than one token
     * @param promptBytes     bytes copied in those calls
     * @param generatedTokens calls of one token
     * @param generatedBytes  bytes copied in those calls
     */
    public record TokenBytes(long promptTokens, long promptBytes, long generatedTokens, long generatedBytes) {
        /** No llama_decode call seen (the token layer's probes off, or no call ended in the span). */
        public static final TokenBytes NONE = new TokenBytes(0, 0, 0, 0);

        /** Bytes per prompt token; NaN without prompt tokens (nothing to divide by, never a 0). */
        public double bytesPerPromptToken() {
            return promptTokens == 0 ? Double.NaN : (double) promptBytes / promptTokens;
        }

        /** Bytes per generated token; NaN without generated tokens. */
        public double bytesPerGeneratedToken() {
            return generatedTokens == 0 ? Double.NaN : (double) generatedBytes / generatedTokens;
        }
    }

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
                          long bytesIn, long copyNs) {
        /** Bytes copied into this backend per graph it computed (a step of its split); NaN without graphs. */
        public double bytesInPerGraph() {
            return graphs == 0 ? Double.NaN : (double) bytesIn / graphs;
        }
    }

    /**
     * One tensor the scheduler copied to {@code toBackend}: its name, type id, shape, how often and how many bytes.
     */
    public record Copy(String tensor, String toBackend, int type, String shape, long copies, long bytes, long copyNs) {}

    /**
     * Whether copies into {@code b} went unseen: a device backend computed graphs while the CPU computed some too
     * (a split graph, whose inputs must cross), yet no copy into it was seen. Its own async copy function was not
     * probed (a stripped library keeps no symbol for it), so its bytes in, and every per-token figure, are unknown,
     * never 0.
     */
    public boolean copiesUnseen(Backend b) {
        if (b.completion() == Completion.IN_CALL || b.graphs() == 0 || b.copiesIn() > 0) {
            return false;
        }
        for (Backend other : backends) {
            if (other.completion() == Completion.IN_CALL && other.graphs() > 0) {
                return true;
            }
        }
        return false;
    }

    /** The backends copies into which went unseen ({@link #copiesUnseen}). */
    public List<String> backendsWithCopiesUnseen() {
        return backends.stream().filter(this::copiesUnseen).map(Backend::backend).toList();
    }

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
