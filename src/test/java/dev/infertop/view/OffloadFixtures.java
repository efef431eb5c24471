package dev.infertop.view;

import dev.infertop.model.BackendOps;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.OffloadTotals.Completion;

import java.util.List;

/** Offload figures of a partly offloaded run: Vulkan closed by synchronizes, the CPU computing in the call. */
public final class OffloadFixtures {
    private OffloadFixtures() {}

    public static OffloadTotals offload() {
        return new OffloadTotals(List.of(
                new OffloadTotals.Backend("Vulkan", Completion.DEVICE_COMPLETE, 40, 12_000_000, 38, 11_000_000,
                        30_000_000, 45, 17_000_000, 80, 81_920, 400_000),
                new OffloadTotals.Backend("CPU", Completion.IN_CALL, 40, 50_000_000, 40, 50_000_000, 0, 45,
                        100_000, 0, 0, 0)),
                List.of(new OffloadTotals.Copy("ffn_inp-1", "Vulkan0", 0, "256x1x1x1", 40, 40_960, 200_000),
                        new OffloadTotals.Copy("ffn_out-1", "Vulkan0", 0, "256x1x1x1", 40, 40_960, 200_000)),
                0, List.of(new OffloadTotals.Dispatch("Vulkan", 40, 3_000_000, 38, 5_000_000)),
                new OffloadTotals.TokenBytes(32, 32 * 1040, 8, 8 * 1044),
                new OffloadTotals.StayedOnCpu(40, List.of(
                        new OffloadTotals.StayedOnCpu.Node("GET_ROWS", "inp_embd", "256x16x1x1", 40),
                        new OffloadTotals.StayedOnCpu.Node("MUL_MAT", "Qcur-0", "256x16x1x1", 20)), 3));
    }

    /** 30 graphs followed node by node: each MUL_MAT dispatched, its ADD fused into it in 20 of them. */
    public static BackendOps.NodeDispatch nodeDispatch() {
        return new BackendOps.NodeDispatch(30, java.util.List.of(
                new BackendOps.OpDispatch("MUL_MAT", 30, 0, false),
                new BackendOps.OpDispatch("ADD", 10, 20, false)));
    }
}
