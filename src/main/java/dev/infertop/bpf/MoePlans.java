package dev.infertop.bpf;


import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Writes the MoE layer's per-graph plans into native/moe.bpf.h's maps: first one `moe_plan` entry per node
 * group (ids tensor, layer), then the group bitmap in `moe_graph_plans` that makes BPF look them up, so a
 * probe never sees a bit without its entry.
 */
public final class MoePlans {
    private final BpfObject object;
    private long failures;

    public MoePlans(BpfObject object) {
        this.object = object;
    }

    /** True when written; false (and counted) when a map refused an entry, e.g. full. */
    public synchronized boolean write(long signature, int[] groups, long[] idsTensors, int[] layers) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocate(ControlLayout.MOE_PLAN_KEY_SIZE, 8);
            MemorySegment value = arena.allocate(ControlLayout.MOE_PLAN_SIZE, 8);
            MemorySegment bits = arena.allocate(ControlLayout.MOE_GROUP_BITS_SIZE, 8);
            for (int i = 0; i < groups.length; i++) {
                int group = groups[i];
                if (group < 0 || group >= ControlLayout.MOE_PLAN_GROUPS) {
                    continue;
                }
                key.set(ValueLayout.JAVA_LONG, ControlLayout.MOE_PLAN_KEY_SIGNATURE, signature);
                key.set(ValueLayout.JAVA_INT, ControlLayout.MOE_PLAN_KEY_GROUP, group);
                value.set(ValueLayout.JAVA_LONG, ControlLayout.MOE_PLAN_IDS_TENSOR, idsTensors[i]);
                value.set(ValueLayout.JAVA_LONG, ControlLayout.MOE_PLAN_COPIED_SEQ, 0L);
                value.set(ValueLayout.JAVA_INT, ControlLayout.MOE_PLAN_LAYER, layers[i]);
                object.updateElement(InfertopProbes.MOE_PLAN_MAP, key, value);
                long word = bits.get(ValueLayout.JAVA_LONG, 8L * (group / 64));
                bits.set(ValueLayout.JAVA_LONG, 8L * (group / 64), word | (1L << (group % 64)));
            }
            MemorySegment signatureKey = arena.allocate(8, 8);
            signatureKey.set(ValueLayout.JAVA_LONG, 0, signature);
            object.updateElement(InfertopProbes.MOE_GRAPH_PLANS_MAP, signatureKey, bits);
            return true;
        } catch (BpfException e) {
            failures++;
            return false;
        }
    }

    /** Switches the probes' copying on or off (the `moe_control` map). */
    public synchronized void setEnabled(boolean enabled) throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ControlLayout.MOE_CONTROL_SIZE, 4);
            value.set(ValueLayout.JAVA_INT, ControlLayout.MOE_CONTROL_ENABLED, enabled ? 1 : 0);
            object.updateElement(InfertopProbes.MOE_CONTROL_MAP, 0, value);
        }
    }

    public synchronized long failures() {
        return failures;
    }
}
