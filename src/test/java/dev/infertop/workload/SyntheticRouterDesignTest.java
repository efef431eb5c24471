package dev.infertop.workload;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SyntheticRouterDesignTest {

    private static final double EXACT = 1e-12;

    @Test
    void frequenciesOfEveryLayerSumToExpertsUsed() {
        RouterDesign design = RouterDesign.zipf(32000, 8, 2, 16, 1.0);
        for (double[] layer : design.expectedExpertFrequencies()) {
            assertEquals(2.0, Arrays.stream(layer).sum(), EXACT);
        }
    }

    @Test
    void layerZeroFollowsTheZipfSkewWithinOneTokenOfTheVocabulary() {
        int vocab = 2048;
        RouterDesign design = RouterDesign.zipf(vocab, 8, 2, 2, 1.0);
        double harmonic = 0;
        for (int e = 1; e <= 8; e++) {
            harmonic += 1.0 / e;
        }
        double[] measured = design.expectedExpertFrequencies()[0];
        for (int e = 0; e < 8; e++) {
            double zipf = 2.0 / ((e + 1) * harmonic);
            assertEquals(zipf, measured[e], 1.0 / vocab, "expert " + e);
            if (e > 0) {
                assertTrue(measured[e] < measured[e - 1], "Zipf frequencies fall with the expert index");
            }
        }
    }

    @Test
    void expectedFrequenciesAreExactlyTheShareOfVocabularyTokensRoutedToEachExpert() {
        int vocab = 1000;
        RouterDesign design = RouterDesign.zipf(vocab, 6, 3, 3, 0.7);
        for (int layer = 0; layer < 3; layer++) {
            long[] counts = new long[6];
            for (int token = 0; token < vocab; token++) {
                int[] experts = design.expertsForToken(layer, token);
                assertEquals(3, experts.length);
                assertEquals(3, Arrays.stream(experts).distinct().count(), "token " + token + " gets distinct experts");
                for (int e : experts) {
                    counts[e]++;
                }
            }
            double[] expected = design.expectedExpertFrequencies()[layer];
            for (int e = 0; e < 6; e++) {
                assertEquals((double) counts[e] / vocab, expected[e], EXACT, "layer " + layer + " expert " + e);
            }
        }
    }

    @Test
    void eachLayerRotatesTheExpertNumbering() {
        RouterDesign design = RouterDesign.zipf(4096, 8, 2, 3, 1.2);
        double[][] frequencies = design.expectedExpertFrequencies();
        for (int layer = 1; layer < 3; layer++) {
            for (int e = 0; e < 8; e++) {
                assertEquals(frequencies[0][e], frequencies[layer][(e + layer) % 8], EXACT);
            }
        }
        int[] layer0 = design.expertsForToken(0, 1234);
        int[] layer2 = design.expertsForToken(2, 1234);
        for (int i = 0; i < layer0.length; i++) {
            assertEquals((layer0[i] + 2) % 8, layer2[i]);
        }
    }

    @Test
    void zeroSkewIsUniform() {
        RouterDesign design = RouterDesign.zipf(2048, 8, 2, 1, 0.0);
        for (double f : design.expectedExpertFrequencies()[0]) {
            assertEquals(0.25, f, EXACT);
        }
    }

    @Test
    void extremeSkewCapsExpertsAtEveryTokenAndSpreadsTheRest() {
        RouterDesign design = RouterDesign.zipf(2048, 8, 2, 1, 8.0);
        double[] designed = design.designedProbabilities();
        assertEquals(1.0, designed[0], EXACT, "the hottest expert cannot be picked more than once per token");
        assertEquals(2.0, Arrays.stream(designed).sum(), EXACT);
        assertTrue(Arrays.stream(designed).allMatch(p -> p <= 1.0));
        double[] exact = design.expectedExpertFrequencies()[0];
        assertEquals(1.0, exact[0], EXACT);
        assertEquals(2.0, Arrays.stream(exact).sum(), EXACT);
    }

    @Test
    void customWeightsAreHonouredIncludingNeverUsedExperts() {
        RouterDesign design = new RouterDesign(1000, 4, 1, 1, new double[] {3, 1, 0, 1});
        assertArrayEquals(new double[] {0.6, 0.2, 0.0, 0.2}, design.expectedExpertFrequencies()[0], EXACT);
        assertThrows(IllegalArgumentException.class, () -> new RouterDesign(1000, 4, 2, 1, new double[] {1, 0, 0, 0}));
    }

    @Test
    void consecutiveTokenIdsSpreadOverClassesAndClassesFitTheExperts() {
        RouterDesign design = RouterDesign.zipf(2048, 8, 2, 2, 1.0);
        assertTrue(design.classCount() <= 8, "at most one class per expert border, got " + design.classCount());
        Set<Integer> classesOfByteTokens = new HashSet<>();
        for (int token = 3; token < 3 + 16; token++) {
            classesOfByteTokens.add(design.classOfToken(token));
        }
        assertTrue(classesOfByteTokens.size() > 2, "neighbouring token ids should not all share one class");
        for (int c = 0; c < design.classCount(); c++) {
            int[] experts = design.expertsForClass(0, c);
            assertEquals(2, Arrays.stream(experts).distinct().count());
        }
    }

    @Test
    void rejectsImpossibleDesigns() {
        assertThrows(IllegalArgumentException.class, () -> RouterDesign.zipf(100, 4, 5, 1, 1.0));
        assertThrows(IllegalArgumentException.class, () -> RouterDesign.zipf(100, 4, 2, 1, -1.0));
        assertThrows(IllegalArgumentException.class, () -> RouterDesign.zipf(100, 4, 2, 1, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> RouterDesign.zipf(100, 4, 2, 1, 1.0).classOfToken(100));
    }
}
