package dev.infertop.bpf;

/**
 * The MoE layer's kernel side: its probes' copying switched on and off, and the plan writer the collector fills
 * (the layer has no probes of its own: it copies ids at the operator layer's).
 */
public final class MoeKernelSide implements KernelSide {
    private final MoePlans plans;

    MoeKernelSide(KernelSide.LayerHandle layer) {
        this.plans = new MoePlans(layer.object());
    }

    @Override
    public void afterEnable() throws BpfException {
        plans.setEnabled(true);
    }

    @Override
    public void beforeDisable() throws BpfException {
        plans.setEnabled(false);
    }

    /** The per-graph plans the collector writes into BPF. */
    public MoePlans plans() {
        return plans;
    }
}
