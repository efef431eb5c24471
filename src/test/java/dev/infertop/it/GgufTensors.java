package dev.infertop.it;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file's tensor table, read here independently of infertop's own GGUF code (it is the tests' oracle for
 * what a graph must read): each tensor's name, type, shape and stored bytes. Block sizes are GGUF's, written out
 * here from ggml-common.h (the product reads them from the target's library instead).
 */
final class GgufTensors {
    private GgufTensors() {}

    record Tensor(String name, int type, long[] ne, long bytes) {
        boolean isMatmulWeight() {
            // Every 2-D weight of a block (attention and FFN projections, the MoE router) and the output head; not
            // the embedding table (GET_ROWS reads one row per token), the norms (1-D) nor the experts (3-D).
            return ne.length >= 2 && name.endsWith(".weight") && !name.startsWith("token_embd")
                    && !name.contains("norm") && !isExpertWeight();
        }

        /** A MoE layer's experts: ne[2] matrices of ne[0]×ne[1], of which a token reads the chosen ones. */
        boolean isExpertWeight() {
            return ne.length == 3 && name.endsWith("_exps.weight");
        }

        /** One expert's matrix of an expert tensor. */
        long expertSliceBytes() {
            return bytes / ne[2];
        }
    }

    /**
     * The model weight bytes one decode token reads: every matmul weight whole, {@code expertsUsed} experts' slices
     * of each expert tensor (the router's top-k picks that many distinct experts for one token), the norms, and
     * one row of the embedding table.
     */
    static long decodeTokenWeightBytes(List<Tensor> tensors, int expertsUsed) {
        long bytes = 0;
        for (Tensor t : tensors) {
            if (t.isMatmulWeight() || (t.ne().length == 1 && t.name().endsWith(".weight"))) {
                bytes += t.bytes();
            } else if (t.isExpertWeight()) {
                bytes += expertsUsed * t.expertSliceBytes();
            } else if (t.name().equals("token_embd.weight")) {
                bytes += t.bytes() / t.ne()[1];
            }
        }
        return bytes;
    }

    /** Of those, the experts' slices. */
    static long decodeTokenExpertBytes(List<Tensor> tensors, int expertsUsed) {
        return tensors.stream().filter(Tensor::isExpertWeight).mapToLong(t -> expertsUsed * t.expertSliceBytes()).sum();
    }

    /** type → {bytes per block, values per block}. */
    private static final Map<Integer, long[]> BLOCKS = Map.ofEntries(Map.entry(0, new long[] {4, 1}),
            Map.entry(1, new long[] {2, 1}), Map.entry(2, new long[] {18, 32}), Map.entry(3, new long[] {20, 32}),
            Map.entry(6, new long[] {22, 32}), Map.entry(7, new long[] {24, 32}), Map.entry(8, new long[] {34, 32}),
            Map.entry(10, new long[] {84, 256}), Map.entry(11, new long[] {110, 256}),
            Map.entry(12, new long[] {144, 256}), Map.entry(13, new long[] {176, 256}),
            Map.entry(14, new long[] {210, 256}), Map.entry(30, new long[] {2, 1}));

    static List<Tensor> read(Path gguf) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(gguf), 1 << 16))) {
            if (Integer.reverseBytes(in.readInt()) != 0x46554747) {
                throw new IOException(gguf + " is not GGUF");
            }
            int version = u32(in);
            if (version < 2) {
                throw new IOException(gguf + ": GGUF version " + version);
            }
            long tensors = u64(in);
            long keys = u64(in);
            for (long k = 0; k < keys; k++) {
                string(in);
                skipValue(in, u32(in));
            }
            List<Tensor> out = new ArrayList<>();
            for (long t = 0; t < tensors; t++) {
                String name = string(in);
                int dims = u32(in);
                long[] ne = new long[dims];
                long elements = 1;
                for (int d = 0; d < dims; d++) {
                    ne[d] = u64(in);
                    elements *= ne[d];
                }
                int type = u32(in);
                u64(in); // offset
                long[] block = BLOCKS.get(type);
                if (block == null) {
                    throw new IOException(gguf + ": tensor " + name + " has type " + type + ", unknown to the oracle");
                }
                out.add(new Tensor(name, type, ne, elements / block[1] * block[0]));
            }
            return out;
        }
    }

    private static void skipValue(DataInputStream in, int type) throws IOException {
        switch (type) {
            case 0, 1, 7 -> in.skipNBytes(1);
            case 2, 3 -> in.skipNBytes(2);
            case 4, 5, 6 -> in.skipNBytes(4);
            case 10, 11, 12 -> in.skipNBytes(8);
            case 8 -> string(in);
            case 9 -> {
                int elementType = u32(in);
                long n = u64(in);
                for (long i = 0; i < n; i++) {
                    skipValue(in, elementType);
                }
            }
            default -> throw new IOException("GGUF value type " + type);
        }
    }

    private static String string(DataInputStream in) throws IOException {
        long length = u64(in);
        if (length < 0 || length > 1 << 20) {
            throw new IOException("GGUF string of " + length + " bytes");
        }
        return new String(in.readNBytes((int) length), StandardCharsets.UTF_8);
    }

    private static int u32(DataInputStream in) throws IOException {
        return Integer.reverseBytes(in.readInt());
    }

    private static long u64(DataInputStream in) throws IOException {
        return Long.reverseBytes(in.readLong());
    }
}
