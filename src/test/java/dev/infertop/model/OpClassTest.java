package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

class OpClassTest {
    @Test
    void classesFollowTheOpNames() {
        assertEquals(OpClass.MATMUL, OpClass.of("MUL_MAT"));
        assertEquals(OpClass.MATMUL, OpClass.of("MUL_MAT_ID"));
        assertEquals(OpClass.ATTENTION, OpClass.of("FLASH_ATTN_EXT"));
        assertEquals(OpClass.ATTENTION, OpClass.of("SOFT_MAX"));
        assertEquals(OpClass.ATTENTION, OpClass.of("ROPE"));
        assertEquals(OpClass.NORM, OpClass.of("RMS_NORM+MUL"));
        assertEquals(OpClass.NORM, OpClass.of("GROUP_NORM"));
        assertEquals(OpClass.ELEMENTWISE, OpClass.of("SILU"));
        assertEquals(OpClass.ELEMENTWISE, OpClass.of("SWIGLU"));
        assertEquals(OpClass.ELEMENTWISE, OpClass.of("ADD"));
        assertEquals(OpClass.COPY, OpClass.of("GET_ROWS"));
        assertEquals(OpClass.COPY, OpClass.of("CPY"));
        assertEquals(OpClass.OTHER, OpClass.of("IM2COL"));
        assertEquals(OpClass.OTHER, OpClass.of(""));
    }

    @Test
    void everyClassHasItsOwnCharacter() {
        assertEquals(OpClass.values().length,
                new HashSet<>(Arrays.stream(OpClass.values()).map(OpClass::symbol).toList()).size());
    }

    @Test
    void tensorGroupsComeFromLlamaCppNames() {
        assertEquals("blk.7 attention", TensorGroup.of("Kcur-7"));
        assertEquals("blk.7 attention", TensorGroup.of("attn_norm-7"));
        assertEquals("blk.7 attention", TensorGroup.of("kq_soft_max-7"));
        assertEquals("blk.7 attention", TensorGroup.of("blk.7.attn_q.weight"));
        assertEquals("blk.12 ffn", TensorGroup.of("ffn_up-12"));
        assertEquals("blk.12 ffn", TensorGroup.of("ffn_moe_gate-12 (view)"));
        assertEquals("blk.12 ffn", TensorGroup.of("l_out-12"));
        assertEquals("blk.0 ffn", TensorGroup.of("blk.0.ffn_down.weight"));
        assertEquals("in/out", TensorGroup.of("result_output"));
        assertEquals("in/out", TensorGroup.of("inp_embd"));
        assertEquals("blk.3 attention", TensorGroup.of("cache_v_l3 (view)"));
        assertEquals("in/out", TensorGroup.of("norm"));
        assertEquals("other", TensorGroup.of("node_42"));
        assertEquals("other", TensorGroup.of(""));
    }
}
