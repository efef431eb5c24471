package dev.infertop.bpf;

import dev.infertop.model.Layer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator layer's fused-call policy, which its kernel side owns (the probe set only asks it): fused-op calls
 * whose ops the graph shows are left unprobed and listed in the layer's status, until a layer reading the operator
 * layer's probes (MoE) or a failed fusion needs them probed; then the layer attaches what it lacks.
 */
class OperatorKernelSideTest {
    private static final Path GGML_CPU = Path.of("/opt/llama/libggml-cpu.so");

    /** A layer handle with no BPF object: the policy writes no map. */
    private static final class Handle implements KernelSide.LayerHandle {
        boolean wanted = true;
        int attaches;

        @Override
        public Object lock() {
            return this;
        }

        @Override
        public BpfObject object() {
            return null;
        }

        @Override
        public int pid() {
            return 1;
        }

        @Override
        public boolean wanted() {
            return wanted;
        }

        @Override
        public void linksAttached(List<ProbeLink> links) {}

        @Override
        public void linksDetached(List<ProbeLink> links) {}

        @Override
        public void attachMissingIfWanted() {
            if (wanted) {
                attaches++;
            }
        }
    }

    private static ProbeSpec fusedCalls() {
        return ProbeLayer.of(Layer.OPERATOR).probes().stream()
                .filter(s -> s instanceof ProbeSpec.CallSiteProbe c && c.program().equals(ProbeSpec.FUSED_CALL_PROGRAM))
                .findFirst().orElseThrow();
    }

    private static List<ProbeSites.Site> twoFusedCalls() {
        return List.of(new ProbeSites.Site("call", 0x100, "in the node loop", "ggml_compute_forward_rms_norm_fused"),
                new ProbeSites.Site("call", 0x180, "in the node loop", "ggml_compute_forward_rms_norm_fused"));
    }

    @Test
    void everyLayerRegistersAKernelSideAndOnlyTheOperatorsIsTheOperatorSide() {
        Handle handle = new Handle();
        for (Layer layer : Layer.values()) {
            KernelSide side = ProbeLayer.of(layer).kernelSide().create(handle);
            assertEquals(layer == Layer.OPERATOR, side instanceof OperatorKernelSide, layer.id());
        }
        assertInstanceOf(MoeKernelSide.class, ProbeLayer.of(Layer.MOE).kernelSide().create(handle));
    }

    @Test
    void inferableFusedCallsAreLeftUnprobedAndNotedUntilRequired() throws BpfException {
        Handle handle = new Handle();
        OperatorKernelSide side = new OperatorKernelSide(handle);
        List<String> asked = new ArrayList<>();
        side.inferFusedCalls(callees -> asked.addAll(callees));

        assertTrue(side.leaveUnprobed(fusedCalls(), GGML_CPU, twoFusedCalls()));
        assertEquals(List.of("ggml_compute_forward_rms_norm_fused"), asked);
        assertEquals(List.of("2 fused-op calls (ggml_compute_forward_rms_norm_fused) in libggml-cpu.so not probed:"
                + " fused node groups are worked out from the graph and checked against each thread's barrier count"),
                side.notes());
        assertTrue(side.fusedCallsInferred());

        side.neededBy(ProbeLayer.of(Layer.MOE)); // the MoE layer numbers groups by the fused calls
        assertFalse(side.fusedCallsInferred());
        assertEquals(1, handle.attaches, "the calls left out are attached now");
        assertFalse(side.leaveUnprobed(fusedCalls(), GGML_CPU, twoFusedCalls()));
        side.requireFusedCalls();
        assertEquals(1, handle.attaches, "required once");
    }

    @Test
    void callsAreProbedWithoutAnInferencePolicyOrWhenTheGraphCannotTell() {
        OperatorKernelSide side = new OperatorKernelSide(new Handle());
        assertFalse(side.leaveUnprobed(fusedCalls(), GGML_CPU, twoFusedCalls()));
        side.inferFusedCalls(callees -> false);
        assertFalse(side.leaveUnprobed(fusedCalls(), GGML_CPU, twoFusedCalls()));
        assertTrue(side.notes().isEmpty());
    }
}
