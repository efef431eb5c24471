package dev.infertop.agg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReuseTrackerTest {
    @Test
    void distancesCountTokensAcrossBatchesPerLayer() {
        ReuseTracker reuse = new ReuseTracker();
        // Layer 0, batch of 3 tokens (indices 0..2): expert 1 at tokens 0 and 2 → distance 2.
        reuse.activate(0, 1, 0);
        reuse.activate(0, 2, 1);
        reuse.activate(0, 1, 2);
        reuse.endBatch(0, 3);
        // Next batch, one token (index 3): expert 1 again → distance 1; expert 2 again → distance 2.
        reuse.activate(0, 1, 0);
        reuse.activate(0, 2, 0);
        reuse.endBatch(0, 1);
        assertEquals(1.5, reuse.meanDistance(1), 1e-12); // (2 + 1) / 2
        assertEquals(2.0, reuse.meanDistance(2), 1e-12);
        assertEquals(0, reuse.tokensSinceLast(1)); // active in the latest token
        // Two more tokens without expert 2: 2 tokens since its last activation.
        reuse.activate(0, 1, 0);
        reuse.activate(0, 1, 1);
        reuse.endBatch(0, 2);
        assertEquals(2, reuse.tokensSinceLast(2));
        assertEquals((2 + 1 + 1 + 1) / 4.0, reuse.meanDistance(1), 1e-12);
    }

    @Test
    void layersAreNumberedApartAndNeverActiveIsReported() {
        ReuseTracker reuse = new ReuseTracker();
        reuse.activate(0, 0, 0);
        reuse.endBatch(0, 1);
        reuse.activate(1, 0, 0); // layer 1's first token: not a reuse of layer 0's activation
        reuse.endBatch(1, 1);
        assertTrue(Double.isNaN(reuse.meanDistance(0)));
        assertEquals(-1, reuse.tokensSinceLast(5));
        reuse.endBatch(0, 4); // layer 0 ran 4 more tokens without expert 0; layer 1 did not
        assertEquals(0, reuse.tokensSinceLast(0), "fewest over layers");
    }
}
