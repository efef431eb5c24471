package dev.infertop.workload;

import java.util.ArrayList;
import java.util.List;

/**
 * A SentencePiece-style ("llama") vocabulary with no real pieces: the three specials, the 256 byte-fallback
 * tokens (so any text tokenises, byte by byte), then unique filler pieces up to the requested size.
 */
final class SyntheticVocab {

    static final int UNKNOWN_TOKEN_ID = 0;
    static final int BOS_TOKEN_ID = 1;
    static final int EOS_TOKEN_ID = 2;
    static final int FIRST_BYTE_TOKEN_ID = 3;
    /** Specials plus byte tokens: the smallest vocabulary llama.cpp's SPM tokenizer can work with. */
    static final int RESERVED_TOKEN_COUNT = FIRST_BYTE_TOKEN_ID + 256;

    // llama.cpp token attribute types (llama_token_type)
    private static final int TYPE_NORMAL = 1;
    private static final int TYPE_UNKNOWN = 2;
    private static final int TYPE_CONTROL = 3;
    private static final int TYPE_BYTE = 6;

    private SyntheticVocab() {
    }

    static List<String> tokens(int vocabSize) {
        List<String> tokens = new ArrayList<>(vocabSize);
        tokens.add("<unk>");
        tokens.add("<s>");
        tokens.add("</s>");
        for (int b = 0; b < 256; b++) {
            tokens.add("<0x%02X>".formatted(b));
        }
        for (int id = RESERVED_TOKEN_COUNT; id < vocabSize; id++) {
            tokens.add("\u2581tok" + id);
        }
        return tokens;
    }

    static float[] scores(int vocabSize) {
        return new float[vocabSize];
    }

    static int[] tokenTypes(int vocabSize) {
        int[] types = new int[vocabSize];
        types[UNKNOWN_TOKEN_ID] = TYPE_UNKNOWN;
        types[BOS_TOKEN_ID] = TYPE_CONTROL;
        types[EOS_TOKEN_ID] = TYPE_CONTROL;
        for (int id = FIRST_BYTE_TOKEN_ID; id < vocabSize; id++) {
            types[id] = id < RESERVED_TOKEN_COUNT ? TYPE_BYTE : TYPE_NORMAL;
        }
        return types;
    }
}
