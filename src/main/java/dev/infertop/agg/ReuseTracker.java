package dev.infertop.agg;

import java.util.Arrays;

/**
 * Per layer × expert, the token index of the last activation, and from it the reuse distance: tokens
 * numbered per layer in the order they were routed (batch after batch, row after row), the distance of an
 * activation is its index minus the index of the same expert's previous activation in that layer (1 =
 * consecutive tokens). Single writer.
 */
public final class ReuseTracker {
    private long[] tokensSeen = new long[0];      // per layer: tokens routed so far (next token's index)
    private long[][] lastActive = new long[0][];  // per layer × expert: index of the last activation, -1 never
    private long[] distanceSum = new long[0];     // per expert, all layers
    private long[] distanceCount = new long[0];

    /** Token {@code row} of the current batch of {@code layer} selected {@code expert}. */
    public void activate(int layer, int expert, int row) {
        ensure(layer, expert);
        long index = tokensSeen[layer] + row;
        long last = lastActive[layer][expert];
        if (last >= 0 && index > last) {
            distanceSum[expert] += index - last;
            distanceCount[expert]++;
        }
        lastActive[layer][expert] = index;
    }

    /** The current batch of {@code layer} had {@code rows} tokens: later batches number on from there. */
    public void endBatch(int layer, int rows) {
        ensure(layer, 0);
        tokensSeen[layer] += rows;
    }

    /** Mean reuse distance of an expert over all layers, NaN when it was never activated twice in a layer. */
    public double meanDistance(int expert) {
        return expert < distanceCount.length && distanceCount[expert] > 0
                ? (double) distanceSum[expert] / distanceCount[expert] : Double.NaN;
    }

    /** Tokens since the expert's last activation, fewest over layers (0 = the latest token); -1 never active. */
    public long tokensSinceLast(int expert) {
        long best = -1;
        for (int layer = 0; layer < lastActive.length; layer++) {
            if (expert < lastActive[layer].length && lastActive[layer][expert] >= 0) {
                long since = tokensSeen[layer] - 1 - lastActive[layer][expert];
                best = best < 0 ? since : Math.min(best, since);
            }
        }
        return best;
    }

    private void ensure(int layer, int expert) {
        if (layer >= tokensSeen.length) {
            int layers = layer + 1;
            tokensSeen = Arrays.copyOf(tokensSeen, layers);
            int old = lastActive.length;
            lastActive = Arrays.copyOf(lastActive, layers);
            for (int l = old; l < layers; l++) {
                lastActive[l] = new long[0];
            }
        }
        if (expert >= lastActive[layer].length) {
            int old = lastActive[layer].length;
            lastActive[layer] = Arrays.copyOf(lastActive[layer], expert + 1);
            Arrays.fill(lastActive[layer], old, expert + 1, -1L);
        }
        if (expert >= distanceSum.length) {
            distanceSum = Arrays.copyOf(distanceSum, expert + 1);
            distanceCount = Arrays.copyOf(distanceCount, expert + 1);
        }
    }
}
