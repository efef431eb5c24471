package dev.infertop.agg;

import dev.infertop.process.layout.OpTable;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FusionPatternsTest {
    // A slice of a real op table, in an order of its own: numbers come from the table, never from names.
    private static final OpTable OPS = new OpTable(
            List.of("NONE", "ADD", "MUL", "MUL_MAT", "NORM", "RMS_NORM", "RMS_NORM_BACK", "SOFT_MAX", "ADD1"),
            List.of());
    private static final int ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 5, SOFT_MAX = 7;

    @Test
    void aFusedFunctionsNameIsReadAsTheRunOfTheTargetsOps() {
        FusionPatterns fusion = new FusionPatterns(OPS);
        assertArrayEquals(new int[] {RMS_NORM, MUL}, fusion.parse("ggml_compute_forward_rms_norm_mul_fused"));
        assertArrayEquals(new int[] {RMS_NORM, MUL}, fusion.parse("ggml_compute_forward_rms_norm_mul_fused.isra.0"));
        assertArrayEquals(new int[] {MUL_MAT, ADD}, fusion.parse("ggml_compute_forward_mul_mat_add_fused"));
        assertArrayEquals(new int[] {ADD, RMS_NORM, MUL}, fusion.parse("ggml_compute_forward_add_rms_norm_mul_fused"));
        assertArrayEquals(new int[] {SOFT_MAX, MUL_MAT, ADD}, fusion.parse("ggml_compute_forward_soft_max_mul_mat_add_fused"));
    }

    @Test
    void namesThatAreNotARunOfOpsAreNotGuessed() {
        FusionPatterns fusion = new FusionPatterns(OPS);
        assertNull(fusion.parse("ggml_compute_forward_rms_norm_fused"), "one op is no fusion");
        assertNull(fusion.parse("ggml_compute_forward_rms_norm_silu_fused"), "SILU is not in this table");
        assertNull(fusion.parse("ggml_compute_forward_rms_norm_mul"), "not a fused function");
        assertNull(fusion.parse("ggml_compute_forward_rmsnorm_mul_fused"));
        assertNull(fusion.parse("ggml_compute_forward__fused"));
    }

    @Test
    void twoReadingsOfOneNameAreNotGuessedBetween() {
        // With ops A, A_B, B_C and C, "a_b_c" reads as A+B_C and as A_B+C.
        FusionPatterns fusion = new FusionPatterns(new OpTable(List.of("A", "A_B", "B_C", "C"), List.of()));
        assertNull(fusion.parse("ggml_compute_forward_a_b_c_fused"));
        assertArrayEquals(new int[] {3, 1}, fusion.parse("ggml_compute_forward_c_a_b_fused"), "only C+A_B");
    }

    @Test
    void learningIsAllOrNothingAndKeepsEachPatternOnce() {
        FusionPatterns fusion = new FusionPatterns(OPS);
        assertFalse(fusion.learn(List.of("ggml_compute_forward_rms_norm_mul_fused", "ggml_compute_forward_x_fused")));
        assertTrue(fusion.patterns().isEmpty(), "nothing learned from a set with a name not understood");
        assertTrue(fusion.learn(List.of("ggml_compute_forward_rms_norm_mul_fused")));
        assertTrue(fusion.learn(List.of("ggml_compute_forward_rms_norm_mul_fused.isra.0",
                "ggml_compute_forward_mul_mat_add_fused")));
        assertEquals(2, fusion.patterns().size());
        assertEquals("RMS_NORM+MUL, MUL_MAT+ADD", fusion.describe());
    }
}
