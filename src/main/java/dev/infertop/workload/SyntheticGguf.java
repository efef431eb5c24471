package dev.infertop.workload;

import dev.infertop.workload.gguf.GgmlType;
import dev.infertop.workload.gguf.GgufTensor;
import dev.infertop.workload.gguf.GgufWriter;
import dev.infertop.workload.gguf.MetadataValue;
import dev.infertop.workload.gguf.TensorData;

/** Lays a {@link SyntheticModel} out as the GGUF keys and tensors llama.cpp's "llama" loader expects. */
final class SyntheticGguf {

    static final String ARCHITECTURE = "llama";
    /** llama_ftype LLAMA_FTYPE_MOSTLY_F16: matrices F16, norms and router F32. */
    static final int FILE_TYPE_MOSTLY_F16 = 1;
    static final float RMS_NORM_EPSILON = 1e-5f;
    static final float ROPE_FREQUENCY_BASE = 10000f;

    private SyntheticGguf() {
    }

    static GgufWriter writerFor(SyntheticModel model) {
        GgufWriter writer = new GgufWriter(GgufWriter.DEFAULT_ALIGNMENT_BYTES);
        putMetadata(writer, model);
        addTensors(writer, model);
        return writer;
    }

    private static void putMetadata(GgufWriter w, SyntheticModel m) {
        String a = ARCHITECTURE + ".";
        w.put("general.architecture", MetadataValue.string(ARCHITECTURE));
        w.put("general.name", MetadataValue.string("infertop-synthetic-" + m.presetName()));
        w.put("general.file_type", MetadataValue.uint32(FILE_TYPE_MOSTLY_F16));
        w.put(a + "vocab_size", MetadataValue.uint32(m.vocabSize()));
        w.put(a + "context_length", MetadataValue.uint32(m.contextLength()));
        w.put(a + "embedding_length", MetadataValue.uint32(m.embeddingLength()));
        w.put(a + "block_count", MetadataValue.uint32(m.layerCount()));
        w.put(a + "feed_forward_length", MetadataValue.uint32(m.feedForwardLength()));
        w.put(a + "attention.head_count", MetadataValue.uint32(m.headCount()));
        w.put(a + "attention.head_count_kv", MetadataValue.uint32(m.kvHeadCount()));
        w.put(a + "rope.dimension_count", MetadataValue.uint32(m.headLength()));
        w.put(a + "attention.layer_norm_rms_epsilon", MetadataValue.float32(RMS_NORM_EPSILON));
        w.put(a + "rope.freq_base", MetadataValue.float32(ROPE_FREQUENCY_BASE));
        if (m.isMoe()) {
            w.put(a + "expert_count", MetadataValue.uint32(m.expertCount()));
            w.put(a + "expert_used_count", MetadataValue.uint32(m.expertsUsedPerToken()));
        }
        w.put("tokenizer.ggml.model", MetadataValue.string("llama"));
        w.put("tokenizer.ggml.tokens", MetadataValue.strings(SyntheticVocab.tokens(m.vocabSize())));
        w.put("tokenizer.ggml.scores", MetadataValue.float32s(SyntheticVocab.scores(m.vocabSize())));
        w.put("tokenizer.ggml.token_type", MetadataValue.int32s(SyntheticVocab.tokenTypes(m.vocabSize())));
        w.put("tokenizer.ggml.bos_token_id", MetadataValue.uint32(SyntheticVocab.BOS_TOKEN_ID));
        w.put("tokenizer.ggml.eos_token_id", MetadataValue.uint32(SyntheticVocab.EOS_TOKEN_ID));
        w.put("tokenizer.ggml.unknown_token_id", MetadataValue.uint32(SyntheticVocab.UNKNOWN_TOKEN_ID));
        w.put("tokenizer.ggml.add_bos_token", MetadataValue.bool(true));
        w.put("tokenizer.ggml.add_eos_token", MetadataValue.bool(false));
        // Provenance, ignored by llama.cpp: lets a monitor recognise a synthetic model and its ground truth.
        w.put("infertop.synthetic.generator_version", MetadataValue.uint32(SyntheticModel.GENERATOR_VERSION));
        w.put("infertop.synthetic.preset", MetadataValue.string(m.presetName()));
        w.put("infertop.synthetic.seed", MetadataValue.uint64(m.seed()));
        w.put("infertop.synthetic.router_skew", MetadataValue.float32((float) m.routerSkew()));
    }

    private static void addTensors(GgufWriter w, SyntheticModel m) {
        long embd = m.embeddingLength();
        long vocab = m.vocabSize();
        long ff = m.feedForwardLength();
        long kv = m.kvEmbeddingLength();
        long experts = m.expertCount();
        SyntheticWeights weights = new SyntheticWeights(m.seed(), m.embeddingLength(), m.isMoe() ? m.routerDesign() : null);

        w.add(f16("token_embd.weight", weights.tokenEmbeddings("token_embd.weight", m.vocabSize()), embd, vocab));
        w.add(f32("output_norm.weight", SyntheticWeights.ones(embd), embd));
        w.add(f16("output.weight", weights.uniform("output.weight", embd, vocab), embd, vocab));
        for (int i = 0; i < m.layerCount(); i++) {
            String b = "blk." + i + ".";
            w.add(f32(b + "attn_norm.weight", SyntheticWeights.ones(embd), embd));
            w.add(f16(b + "attn_q.weight", weights.uniform(b + "attn_q.weight", embd, embd), embd, embd));
            w.add(f16(b + "attn_k.weight", weights.uniform(b + "attn_k.weight", embd, kv), embd, kv));
            w.add(f16(b + "attn_v.weight", weights.uniform(b + "attn_v.weight", embd, kv), embd, kv));
            w.add(f16(b + "attn_output.weight",
                    weights.uniformSparingClassDimensions(b + "attn_output.weight", embd, embd), embd, embd));
            w.add(f32(b + "ffn_norm.weight", SyntheticWeights.ones(embd), embd));
            if (m.isMoe()) {
                w.add(f32(b + "ffn_gate_inp.weight", weights.router(i), embd, experts));
                w.add(f16(b + "ffn_gate_exps.weight",
                        weights.uniform(b + "ffn_gate_exps.weight", embd, ff * experts), embd, ff, experts));
                w.add(f16(b + "ffn_up_exps.weight",
                        weights.uniform(b + "ffn_up_exps.weight", embd, ff * experts), embd, ff, experts));
                w.add(f16(b + "ffn_down_exps.weight",
                        weights.uniformSparingClassDimensions(b + "ffn_down_exps.weight", ff, embd * experts), ff, embd, experts));
            } else {
                w.add(f16(b + "ffn_gate.weight", weights.uniform(b + "ffn_gate.weight", embd, ff), embd, ff));
                w.add(f16(b + "ffn_up.weight", weights.uniform(b + "ffn_up.weight", embd, ff), embd, ff));
                w.add(f16(b + "ffn_down.weight", weights.uniform(b + "ffn_down.weight", ff, embd), ff, embd));
            }
        }
    }

    private static GgufTensor f16(String name, TensorData data, long... dims) {
        return new GgufTensor(name, GgmlType.F16, dims, data);
    }

    private static GgufTensor f32(String name, TensorData data, long... dims) {
        return new GgufTensor(name, GgmlType.F32, dims, data);
    }
}
