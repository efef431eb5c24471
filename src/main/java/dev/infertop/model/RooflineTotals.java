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
 * @param decodeSteps                     decode steps of any batch size (a server's busy slots), per batch size
 * @param kvBytesPerPosition              KV cache bytes one context position holds over every layer (K and V,
 *                                        from the attention's cache views), 0 until an attention node was costed
 * @param positionedTokens                generated tokens decoded one per sequence in any batch, run so far
 *                                        (graphs costed or not)
 * @param positionedContextPositions      their context lengths summed: the KV cells their attention read
 */
public record RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                             long expertWeightBytesPerDecodeToken, long uncostedNodes, long unroutedNodes,
                             Roofline.Ceilings ceilings, List<DecodeSteps> decodeSteps, long kvBytesPerPosition,
                             long positionedTokens, long positionedContextPositions) {
    public static final RooflineTotals EMPTY = new RooflineTotals(List.of(), 0, 0, 0, 0, 0, null);

    public RooflineTotals {
        ops = List.copyOf(ops);
        decodeSteps = List.copyOf(decodeSteps);
    }

    /** Without decode steps (a snapshot written before they were kept). */
    public RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                          long expertWeightBytesPerDecodeToken, long uncostedNodes, long unroutedNodes,
                          Roofline.Ceilings ceilings) {
        this(ops, decodeGraphs, weightBytesPerDecodeToken, expertWeightBytesPerDecodeToken, uncostedNodes,
                unroutedNodes, ceilings, List.of(), 0, 0, 0);
    }

    /** With decode steps, without the run's positioned tokens (a test). */
    public RooflineTotals(List<OpRoofline> ops, long decodeGraphs, long weightBytesPerDecodeToken,
                          long expertWeightBytesPerDecodeToken, long uncostedNodes, long unroutedNodes,
                          Roofline.Ceilings ceilings, List<DecodeSteps> decodeSteps, long kvBytesPerPosition) {
        this(ops, decodeGraphs, weightBytesPerDecodeToken, expertWeightBytesPerDecodeToken, uncostedNodes,
                unroutedNodes, ceilings, decodeSteps, kvBytesPerPosition, 0, 0);
    }

    /** Every decode step of the span, whatever its batch size, as one. */
    public DecodeSteps allDecodeSteps() {
        DecodeSteps all = new DecodeSteps(0, 0, 0, 0, 0, 0, 0, 0);
        for (DecodeSteps steps : decodeSteps) {
            all = all.plus(steps);
        }
        return all;
    }

    /**
     * Busy sequences at which a decode step's intensity reaches the ridge point: b tokens share the weights W
     * and add b × (F FLOPs, K KV bytes) each, so intensity = b·F / (W + b·K) = ridge at b = ridge·W / (F − ridge·K).
     * Infinite where KV bytes alone keep it below the ridge (F ≤ ridge·K); NaN without ceilings or steps.
     */
    public double ridgeBatchTokens() {
        DecodeSteps all = allDecodeSteps();
        if (ceilings == null || all.tokens() == 0 || all.steps() == 0) {
            return Double.NaN;
        }
        double ridge = ceilings.ridgeFlopsPerByte();
        double weightsPerStep = (double) all.weightBytes() / all.steps();
        double flopsPerToken = (double) all.flops() / all.tokens();
        double kvPerToken = (double) all.kvBytes() / all.tokens();
        double denominator = flopsPerToken - ridge * kvPerToken;
        return denominator <= 0 ? Double.POSITIVE_INFINITY : ridge * weightsPerStep / denominator;
    }

    /** Context positions per step past which attention's KV reads exceed the step's weight reads; 0 when unknown. */
    public long kvOvertakesWeightsAtPositions() {
        DecodeSteps all = allDecodeSteps();
        if (kvBytesPerPosition <= 0 || all.steps() == 0) {
            return 0;
        }
        return (long) Math.ceil(all.weightBytes() / (double) all.steps() / kvBytesPerPosition);
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
