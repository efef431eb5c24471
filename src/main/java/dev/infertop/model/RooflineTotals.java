package dev.infertop.model;

import java.util.List;

/**
 * What the graphs moved and computed, per op, over some span (one interval or the run), from the nodes' shapes
 * and types: the roofline's points, with the machine's ceilings when {@code infertop machine} measured them.
 *
 * @param ops                      per op (as the ops table names it) with any costed node
 * @param decodeGraphs             graphs of one-token decode steps in the span
 * @param weightBytesPerDecodeToken weight bytes the last such graph read (what one generated token streams)
 * @param ceilings                 this machine's ceilings, null when not measured
 */
public record RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                             Roofline.Ceilings ceilings) {
    public static final RooflineTotals EMPTY = new RooflineTotals(List.of(), 0, 0, null);

    public RooflineTotals {
        ops = List.copyOf(ops);
    }

    /** One op's nodes: bytes read and written (weights among them), FLOPs, and the wall time of their groups. */
    public record OpRoofline(String op, long nodes, long bytes, long weightBytes, long flops, long wallNs) {
        public Roofline.Point point(Roofline.Ceilings ceilings) {
            return Roofline.point(bytes, flops, wallNs, ceilings);
        }
    }

    public boolean isEmpty() {
        return ops.isEmpty();
    }
}
