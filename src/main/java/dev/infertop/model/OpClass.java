package dev.infertop.model;

import java.util.Locale;

/**
 * What kind of work an op is, for the thread lanes: each class has a colour and its own character, so the
 * lanes stay readable without colour (NO_COLOR, monochrome terminals).
 */
public enum OpClass {
    MATMUL('M', "matmul"),
    ATTENTION('A', "attention"),
    NORM('N', "norm"),
    ELEMENTWISE('E', "elementwise"),
    COPY('C', "copy"),
    OTHER('O', "other");

    private final char symbol;
    private final String label;

    OpClass(char symbol, String label) {
        this.symbol = symbol;
        this.label = label;
    }

    public char symbol() {
        return symbol;
    }

    public String label() {
        return label;
    }

    /**
     * The class of an op as {@code ggml_op_name} spells it (a UNARY node by its unary op, a fused group as
     * {@code A+B}: classed by its first op, the one that does the heavy part).
     */
    public static OpClass of(String opName) {
        if (opName == null || opName.isEmpty()) {
            return OTHER;
        }
        int plus = opName.indexOf('+');
        String op = (plus > 0 ? opName.substring(0, plus) : opName).toUpperCase(Locale.ROOT);
        return switch (op) {
            case "MUL_MAT", "MUL_MAT_ID", "OUT_PROD" -> MATMUL;
            case "FLASH_ATTN_EXT", "FLASH_ATTN_BACK", "SOFT_MAX", "SOFT_MAX_BACK", "ROPE", "ROPE_BACK",
                 "ALIBI", "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SSM_CONV", "SSM_SCAN", "RWKV_WKV6", "RWKV_WKV7",
                 "GATED_LINEAR_ATTN" -> ATTENTION;
            case "ADD", "ADD1", "ADD_ID", "SUB", "MUL", "DIV", "SCALE", "SQR", "SQRT", "LOG", "SIN", "COS",
                 "CLAMP", "ACC", "SUM", "SUM_ROWS", "MEAN", "ARGMAX", "SILU", "GELU", "GELU_QUICK", "GELU_ERF",
                 "RELU", "SIGMOID", "TANH", "ELU", "HARDSWISH", "HARDSIGMOID", "EXP", "NEG", "ABS", "SGN", "STEP",
                 "GLU", "SWIGLU", "GEGLU", "REGLU", "SILU_BACK", "LEAKY_RELU", "UNARY", "ARGSORT", "TOP_K"
                    -> ELEMENTWISE;
            case "CPY", "CONT", "DUP", "SET_ROWS", "GET_ROWS", "GET_ROWS_BACK", "SET", "CONCAT", "PAD", "REPEAT",
                 "REPEAT_BACK", "TRANSPOSE", "PERMUTE", "VIEW", "RESHAPE" -> COPY;
            default -> op.contains("NORM") ? NORM : OTHER;
        };
    }
}
