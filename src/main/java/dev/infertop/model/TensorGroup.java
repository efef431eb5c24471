package dev.infertop.model;

/**
 * Which part of the model a graph node belongs to, from its tensor name. llama.cpp names weights
 * {@code blk.N.attn_q.weight} and intermediate tensors {@code NAME-N} ({@code Kcur-7}, {@code ffn_up-7},
 * {@code attn_norm-7}), ggml adds suffixes such as {@code " (view)"}; N is the layer.
 */
public final class TensorGroup {
    private TensorGroup() {}

    public static final String MODEL_IO = "in/out";
    public static final String OTHER = Other.NAME;

    /** "blk.N attention", "blk.N ffn", "in/out" (embeddings, output head), or "other". */
    public static String of(String tensorName) {
        if (tensorName == null || tensorName.isEmpty()) {
            return OTHER;
        }
        int space = tensorName.indexOf(' ');
        String name = space > 0 ? tensorName.substring(0, space) : tensorName;
        int layer = -1;
        String part = name;
        if (name.startsWith("blk.")) {
            int dot = name.indexOf('.', 4);
            layer = parseLayer(name, 4, dot < 0 ? name.length() : dot);
            part = dot < 0 ? "" : name.substring(dot + 1);
        } else {
            int dash = name.lastIndexOf('-');
            if (dash > 0) {
                layer = parseLayer(name, dash + 1, name.length());
                if (layer >= 0) {
                    part = name.substring(0, dash);
                }
            }
            int cache = name.lastIndexOf("_l"); // KV cache tensors: cache_k_l7, cache_v_l7
            if (layer < 0 && cache > 0) {
                layer = parseLayer(name, cache + 2, name.length());
                part = name.substring(0, cache);
            }
        }
        if (layer < 0) {
            if (name.startsWith("inp_") || name.startsWith("result") || name.startsWith("token_embd")
                    || name.startsWith("output") || name.equals("norm")) {
                return MODEL_IO;
            }
            return OTHER;
        }
        // The residual add that closes a layer ("l_out") and MoE routing belong to the FFN half.
        boolean ffn = part.startsWith("ffn") || part.startsWith("l_out") || part.contains("moe");
        return "blk." + layer + (ffn ? " ffn" : " attention");
    }

    private static int parseLayer(String text, int from, int to) {
        if (from >= to || to - from > 6) {
            return -1;
        }
        int value = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
