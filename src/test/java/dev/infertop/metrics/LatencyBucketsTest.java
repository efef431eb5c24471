package dev.infertop.metrics;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class LatencyBucketsTest {
    private static final long US = 1_000, MS = 1_000_000;

    @Test
    void countsEachValueInTheFirstBucketWhoseEdgeItDoesNotExceed() {
        Histogram tpot = new Histogram(3);
        tpot.recordValue(150 * US);        // (0.1, 0.2] ms
        tpot.recordValueWithCount(14_200 * US, 3); // (10, 20] ms
        tpot.recordValue(1 * MS);          // exactly on the 1 ms edge: at or below it
        tpot.recordValue(3_000 * MS);      // above every edge
        LatencyBuckets buckets = LatencyBuckets.of(tpot, LatencyBuckets.TPOT_EDGES_NS);
        long[] expected = new long[LatencyBuckets.TPOT_EDGES_NS.length + 1];
        expected[1] = 1;  // le 0.2 ms
        expected[3] = 1;  // le 1 ms
        expected[7] = 3;  // le 20 ms
        expected[14] = 1; // +Inf
        assertArrayEquals(expected, buckets.counts());
        assertEquals(6, buckets.count());
        assertEquals(2, buckets.cumulative(3));
        assertEquals(5, buckets.cumulative(7));
    }

    /** The reference: HdrHistogram's own count of values at or below each edge, on 100 000 random op times. */
    @Test
    void cumulativeCountsEqualHdrHistogramsCountBetweenZeroAndEachEdge() {
        for (int digits : new int[] {2, 3}) {
            Histogram reference = new Histogram(digits);
            SplittableRandom random = new SplittableRandom(16);
            for (int i = 0; i < 100_000; i++) {
                // log-uniform from 0.5 µs to 200 ms: every bucket of the op edges gets values, edges included
                long value = (long) Math.exp(Math.log(500) + random.nextDouble() * Math.log(400_000));
                reference.recordValue(i % 1000 == 0 ? LatencyBuckets.OP_EDGES_NS[i / 1000 % 16] : value);
            }
            LatencyBuckets buckets = LatencyBuckets.of(reference, LatencyBuckets.OP_EDGES_NS);
            long[] edges = LatencyBuckets.OP_EDGES_NS;
            for (int i = 0; i < edges.length; i++) {
                assertEquals(reference.getCountBetweenValues(0, edges[i]), buckets.cumulative(i),
                        digits + " digits, edge " + edges[i] + " ns");
            }
            assertEquals(reference.getTotalCount(), buckets.cumulative(edges.length));
        }
    }

    @Test
    void anEmptyHistogramAndOneAboveEveryEdge() {
        assertArrayEquals(new long[LatencyBuckets.TTFT_EDGES_NS.length + 1],
                LatencyBuckets.of(new Histogram(3), LatencyBuckets.TTFT_EDGES_NS).counts());
        Histogram slow = new Histogram(3);
        slow.recordValueWithCount(90_000 * MS, 2);
        long[] expected = new long[LatencyBuckets.TTFT_EDGES_NS.length + 1];
        expected[LatencyBuckets.TTFT_EDGES_NS.length] = 2;
        assertArrayEquals(expected, LatencyBuckets.of(slow, LatencyBuckets.TTFT_EDGES_NS).counts());
    }

    @Test
    void upperBoundsAreTheEdgesInSecondsThenInfinity() {
        double[] bounds = LatencyBuckets.empty(LatencyBuckets.TPOT_EDGES_NS).upperBoundsSeconds();
        assertEquals(1e-4, bounds[0]);
        assertEquals(2.0, bounds[13]);
        assertEquals(Double.POSITIVE_INFINITY, bounds[14]);
    }
}
