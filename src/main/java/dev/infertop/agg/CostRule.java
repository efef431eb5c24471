package dev.infertop.agg;

import java.util.Set;

/**
 * How a node's bytes and FLOPs follow from its op, its sources and its result (the roofline's cost model). Bytes
 * are what the op must read and write by type and shape: every source it reads plus its result, except where
 * the op reads or writes part of a tensor (noted per rule). FLOPs are counted where they mean something:
 * matrix products and attention exactly, arithmetic ops as one per element (a lower bound for SILU, SOFT_MAX's
 * exp and division, a norm's square and sum: the intensity of these ops is what matters, and it is tiny), and
 * none for ops that only move data.
 */
enum CostRule {
    /** src0 (the weight) · src1 → result: 2·K·M·N FLOPs per result matrix. */
    MUL_MAT,
    /** Experts: src0 holds ne[2] experts, src2 the chosen ids; only the chosen experts' slices are read. */
    MUL_MAT_ID,
    /** Rows of src0 picked by src1's ids: reads those rows only, not the whole table (the embedding). */
    GET_ROWS,
    /** src1's rows written into src0 (the KV cache) at src2's ids: writes src1's elements in the result's type. */
    SET_ROWS,
    /** src0 copied into src1 (a view of its destination): src1 is written, not read. */
    CPY,
    /** Q·Kᵀ then ·V over the KV cache: 2·n_q·n_kv·heads·(D_k + D_v) FLOPs (the mask, src[3], is not probed). */
    FLASH_ATTN,
    /** One FLOP per element of the larger of src0 and the result (element-wise ops, norms, softmax, rope). */
    ARITHMETIC,
    /** Data movement and everything else: bytes only, FLOPs 0. */
    MOVE;

    private static final Set<String> ARITHMETIC_OPS = Set.of("ADD", "ADD1", "ADD_ID", "ACC", "SUB", "MUL", "DIV",
            "SQR", "SQRT", "LOG", "SIN", "COS", "SCALE", "CLAMP", "SUM", "SUM_ROWS", "MEAN", "NORM", "RMS_NORM",
            "GROUP_NORM", "L2_NORM", "SOFT_MAX", "ROPE", "GLU", "UNARY",
            // A UNARY node is named by its unary op (the op-number lookup asks with sub-op 0: ABS).
            "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU", "GELU_QUICK", "SILU",
            "HARDSWISH", "HARDSIGMOID", "EXP", "GELU_ERF", "XIELU", "EXPM1", "SOFTPLUS");

    /** The rule for an op as the target's ggml_op_name() names it. */
    static CostRule of(String opName) {
        return switch (opName) {
            case "MUL_MAT" -> MUL_MAT;
            case "MUL_MAT_ID" -> MUL_MAT_ID;
            case "GET_ROWS" -> GET_ROWS;
            case "SET_ROWS" -> SET_ROWS;
            case "CPY" -> CPY;
            case "FLASH_ATTN_EXT" -> FLASH_ATTN;
            default -> ARITHMETIC_OPS.contains(opName) ? ARITHMETIC : MOVE;
        };
    }
}
