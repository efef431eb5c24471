package dev.infertop.process.layout;

import dev.infertop.process.BatchLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Finds where {@code struct llama_batch} keeps its per-token arrays by asking the target's own libllama for
 * two batches: {@code llama_batch_init(1000, 0, 3)} (token ids) and {@code llama_batch_init(1000, 8, 3)}
 * (embeddings). Runs only in the calibration child (it runs the library's code).
 *
 * <p>Each array is told apart by what the library allocates for it, not by llama.h's order: {@code token} is
 * the pointer set only without embeddings, {@code embd} the one set only with them, {@code seq_id} the array of
 * 1001 pointers whose last is NULL, {@code logits} the array of 1000 bytes; {@code pos} and {@code n_seq_id}
 * are both 1000 ints, which no allocation can tell apart, so they are taken in the order they come (every
 * llama.h since batches held positions has {@code pos} first). The struct's end is where the library stopped
 * writing: the return buffer is filled with a sentinel first.
 */
final class BatchProbe {
    private BatchProbe() {}

    static final int TOKENS = 1000;
    static final int EMBEDDING = 8;
    static final int SEQUENCES = 3;
    /** The return buffer: far above llama_batch (56 bytes on LP64 since late 2023; 80 with the old all_* fields). */
    static final int WORDS = 16;
    private static final long SENTINEL = 0x5afe5afe5afe5afeL;
    /** User-space pointers on x86-64 and arm64 (48-bit, or 52 with LPA) lie below this. */
    private static final long USER_SPACE_END = 1L << 52;

    private static final Linker LINKER = Linker.nativeLinker();

    static BatchLayout calibrate(Path libllama) throws CalibrationException {
        Arena arena = Arena.ofShared(); // never closed: the child exits right after
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(libllama.toString(), arena);
        } catch (IllegalArgumentException e) {
            throw CalibrationException.of(libllama, "dlopen failed (" + GgmlLibrary.dlerrorOf(libllama) + ")");
        }
        MemorySegment init = lookup.find("llama_batch_init")
                .orElseThrow(() -> CalibrationException.of(libllama, "it lacks llama_batch_init"));
        MemorySegment usableSize = LINKER.defaultLookup().find("malloc_usable_size")
                .orElseThrow(() -> CalibrationException.of(libllama, "the C library lacks malloc_usable_size"));
        StructLayout returned = MemoryLayout.structLayout(MemoryLayout.sequenceLayout(WORDS, JAVA_LONG));
        MethodHandle batchInit = LINKER.downcallHandle(init, FunctionDescriptor.of(returned, JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle mallocUsableSize = LINKER.downcallHandle(usableSize, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
        long[] tokens = batch(batchInit, arena, returned, 0);
        long[] embeddings = batch(batchInit, arena, returned, EMBEDDING);
        return classify(libllama, tokens, embeddings, address -> usable(mallocUsableSize, address),
                address -> MemorySegment.ofAddress(address).reinterpret((long) (TOKENS + 1) * Long.BYTES));
    }

    interface UsableSize {
        long of(long address);
    }

    interface Memory {
        MemorySegment at(long address);
    }

    /**
     * The layout the two batches' words imply; separate from the calls so that tests can feed it words.
     * {@code usable} is malloc_usable_size, called only on words that both batches hold as aligned user-space
     * pointers; {@code memory} reads the seq_id array.
     */
    static BatchLayout classify(Path library, long[] tokens, long[] embeddings, UsableSize usable, Memory memory)
            throws CalibrationException {
        int words = 0;
        while (words < WORDS && (tokens[words] != SENTINEL || embeddings[words] != SENTINEL)) {
            words++;
        }
        for (int i = words; i < WORDS; i++) {
            if (tokens[i] != SENTINEL || embeddings[i] != SENTINEL) {
                throw CalibrationException.of(library, "llama_batch_init wrote past a gap in its result");
            }
        }
        if (words < 2 || (int) tokens[0] != 0 || (int) embeddings[0] != 0) {
            throw CalibrationException.of(library, "llama_batch_init's result does not start with n_tokens 0");
        }
        int token = -1;
        int embd = -1;
        List<Integer> both = new ArrayList<>();
        for (int i = 1; i < words; i++) {
            boolean withTokens = tokens[i] != 0;
            boolean withEmbeddings = embeddings[i] != 0;
            if (withTokens && !withEmbeddings) {
                token = token == -1 ? i : -2;
            } else if (!withTokens && withEmbeddings) {
                embd = embd == -1 ? i : -2;
            } else if (withTokens) {
                both.add(i);
            }
        }
        if (token < 0 || embd < 0 || both.size() != 4) {
            throw CalibrationException.of(library, "llama_batch_init's result is not one token array, one embedding"
                    + " array and four per-token arrays (" + words * 8 + " bytes)");
        }
        List<Integer> ints = new ArrayList<>();
        int seqId = -1;
        int logits = -1;
        for (int i : both) {
            long address = tokens[i];
            if ((address & 15) != 0 || address <= 0 || address >= USER_SPACE_END) {
                throw CalibrationException.of(library, "llama_batch word " + i * 8 + " is not a heap pointer");
            }
            long bytes = usable.of(address);
            if (bytes >= TOKENS && bytes < 2L * TOKENS) {
                logits = logits == -1 ? i : -2;
            } else if (bytes >= 4L * TOKENS && bytes < 8L * TOKENS) {
                ints.add(i);
            } else if (bytes >= 8L * (TOKENS + 1) && bytes < 12L * TOKENS) {
                seqId = seqId == -1 ? i : -2;
            } else {
                throw CalibrationException.of(library, "llama_batch word " + i * 8 + " holds " + bytes
                        + " bytes, not an array of " + TOKENS + " tokens");
            }
        }
        if (logits < 0 || seqId < 0 || ints.size() != 2) {
            throw CalibrationException.of(library, "llama_batch's arrays are not logits, seq_id, pos and n_seq_id");
        }
        MemorySegment seqIds = memory.at(tokens[seqId]);
        long first = seqIds.getAtIndex(JAVA_LONG, 0);
        if (first == 0 || seqIds.getAtIndex(JAVA_LONG, TOKENS) != 0
                || usable.of(first) < (long) SEQUENCES * Integer.BYTES) {
            throw CalibrationException.of(library, "llama_batch's seq_id is not one id array per token, NULL-ended");
        }
        return new BatchLayout(ints.get(0) * 8, ints.get(1) * 8, seqId * 8, logits * 8);
    }

    private static long[] batch(MethodHandle batchInit, Arena arena, StructLayout returned, int embedding)
            throws CalibrationException {
        MemorySegment buffer = arena.allocate(returned);
        for (int i = 0; i < WORDS; i++) {
            buffer.setAtIndex(JAVA_LONG, i, SENTINEL);
        }
        SegmentAllocator intoBuffer = (size, alignment) -> buffer;
        MemorySegment result;
        try {
            result = (MemorySegment) batchInit.invokeExact(intoBuffer, TOKENS, embedding, SEQUENCES);
        } catch (Throwable t) {
            throw new CalibrationException("llama_batch_init failed: " + t);
        }
        long[] words = new long[WORDS];
        for (int i = 0; i < WORDS; i++) {
            words[i] = result.getAtIndex(JAVA_LONG, i);
        }
        return words;
    }

    private static long usable(MethodHandle mallocUsableSize, long address) {
        try {
            return (long) mallocUsableSize.invokeExact(address);
        } catch (Throwable t) {
            return -1;
        }
    }
}
