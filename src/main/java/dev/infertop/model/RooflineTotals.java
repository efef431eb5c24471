package dev.infertop.model;

import java.util.List;

/**
 * What the graphs moved and computed, per op, over some span (one interval or the run), from the nodes' shapes
 * and types: the roofline's points, with the machine's ceilings when {@code infertop machine} measured them.
 *
 * @param ops                             per op (as the ops table names it) with any costed node
 * @param decodeGraphs                    graphs of one-token decode steps in the span
 * @param weightBytesPerDecodeToken       model weight bytes the last such graph costed whole read (what one
 *                                        generated token streams: matmul weights, the chosen experts' slices,
 *                                        norms, the token's embedding row)
 * @param expertWeightBytesPerDecodeToken of those, the chosen experts' slices (MUL_MAT_ID); 0 for a dense model
 * @param uncostedNodes                   executed nodes in the span left out with their whole node group: a
 *                                        source unreadable, a type not sized, or a MUL_MAT_ID's experts unknown
 * @param unroutedNodes                   of those, MUL_MAT_ID nodes whose chosen experts were not read (the MoE
 *                                        layer off, its ids read lost or cut short): never costed as all experts
 * @param ceilings                        this machine's ceilings, null when not measured
 */
public record RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                             long expertWeightBytesPerDecodeToken, long uncostedNodes, long unroutedNodes,
                             Roofline.Ceilings ceilings) {
    public static final RooflineTotals EMPTY = new RooflineTotals(List.of(), 0, 0, 0, 0, 0, null);

    public RooflineTotals {
        ops = List.copyOf(ops);
    }

    /** Without MoE or uncosted figures (a dense model, every node costed). */
    public RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                          Roofline.Ceilings ceilings) {
        this(ops, decodeGraphs, weightBytesPerDecodeToken, 0, 0, 0, ceilings);
    }

    /** One op's nodes: bytes read and written (model weights among them), FLOPs, and the wall time of their groups. */
    public record OpRoofline(String op, long nodes, long bytes, long weightBytes, long flops, long wallNs) {
        public Roofline.Point point(Roofline.Ceilings ceilings) {
            return Roofline.point(bytes, flops, wallNs, ceilings);
        }
    }

    public boolean isEmpty() {
        return ops.isEmpty();
    }
}
