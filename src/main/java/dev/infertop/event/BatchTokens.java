package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A llama_decode call's batch, token by token (struct batch_event's tokens), decoded: one instance per decoder,
 * refilled for each record, read during the call only (copy what is kept).
 */
public final class BatchTokens {
    private MemorySegment data = MemorySegment.NULL;
    private long offset;
    private int count;

    /** Views {@code count} tokens at {@code offset} of {@code data} (the decoder checked they are in it). */
    BatchTokens wrap(MemorySegment data, long offset, int count) {
        this.data = data;
        this.offset = offset;
        this.count = count;
        return this;
    }

    /** A batch written field by field (tests, replays): {@link Builder#add} each token, then {@link Builder#build}. */
    public static Builder builder(int capacity) {
        return new Builder(capacity);
    }

    /** How many tokens the record holds. */
    public int count() {
        return count;
    }

    /** Token {@code i}'s position, -1 when the batch had no position array. */
    public int position(int i) {
        return data.get(ValueLayout.JAVA_INT_UNALIGNED, at(i) + EventLayout.BATCH_TOKEN_POS);
    }

    /** Token {@code i}'s first sequence id, -1 when the batch had no sequence array. */
    public int sequence(int i) {
        return data.get(ValueLayout.JAVA_INT_UNALIGNED, at(i) + EventLayout.BATCH_TOKEN_SEQ);
    }

    /** Token {@code i}'s logits flag: 1 an output, 0 not, -1 when the batch had no logits array. */
    public byte logits(int i) {
        return data.get(ValueLayout.JAVA_BYTE, at(i) + EventLayout.BATCH_TOKEN_LOGITS);
    }

    /** How many sequences token {@code i} belongs to. */
    public byte sequenceCount(int i) {
        return data.get(ValueLayout.JAVA_BYTE, at(i) + EventLayout.BATCH_TOKEN_N_SEQ);
    }

    private long at(int i) {
        return offset + (long) i * EventLayout.BATCH_TOKEN_SIZE;
    }

    /** Writes tokens in the record's own layout, so that tests read them through the same view. */
    public static final class Builder {
        private final MemorySegment data;
        private int count;

        private Builder(int capacity) {
            data = MemorySegment.ofArray(new byte[Math.max(1, capacity) * EventLayout.BATCH_TOKEN_SIZE]);
        }

        /** Appends one token; a full builder refuses. */
        public Builder add(int position, int sequence, int logits, int sequenceCount) {
            long at = (long) count * EventLayout.BATCH_TOKEN_SIZE;
            if (at + EventLayout.BATCH_TOKEN_SIZE > data.byteSize()) {
                throw new IllegalStateException("batch builder full at " + count + " tokens");
            }
            data.set(ValueLayout.JAVA_INT_UNALIGNED, at + EventLayout.BATCH_TOKEN_POS, position);
            data.set(ValueLayout.JAVA_INT_UNALIGNED, at + EventLayout.BATCH_TOKEN_SEQ, sequence);
            data.set(ValueLayout.JAVA_BYTE, at + EventLayout.BATCH_TOKEN_LOGITS, (byte) logits);
            data.set(ValueLayout.JAVA_BYTE, at + EventLayout.BATCH_TOKEN_N_SEQ, (byte) sequenceCount);
            count++;
            return this;
        }

        /** A view of the tokens added so far. */
        public BatchTokens build() {
            return new BatchTokens().wrap(data, 0, count);
        }
    }
}
