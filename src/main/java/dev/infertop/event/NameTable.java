package dev.infertop.event;

import dev.infertop.model.SafeText;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Tensor names seen in node records, each decoded to a String once. Lookups hash the raw bytes in place
 * (FNV-1a) into an open-addressing table, so a name already seen costs no allocation.
 *
 * <p>Bounded: the target chooses its names, and one that makes a new name per node would otherwise grow this
 * table (and every per-name table after it) until the heap is gone. At most {@link #MAX_NAMES} are kept; a
 * new name past that gets id -1 (read as "", a node of group "other") and is counted in
 * {@link #lookupsDropped()}. A real model has a few thousand (an 80-layer llama ~2 500, MoE ~4 000).
 */
public final class NameTable {
    /** Distinct names kept: ~10 MB at most (64-byte names, escapes included); see cli.JvmOptions. */
    public static final int MAX_NAMES = 1 << 15;

    private long lookupsDropped;
    private long[] hashes = new long[1024];
    private int[] ids = new int[1024];
    private final List<String> names = new ArrayList<>();

    public NameTable() {
        Arrays.fill(ids, -1);
    }

    /** The id of the NUL-terminated name at {@code offset} (at most {@code maxBytes}), registering it if new. */
    public int intern(MemorySegment data, long offset, int maxBytes) {
        long hash = 0xcbf29ce484222325L;
        int length = 0;
        while (length < maxBytes) {
            byte b = data.get(ValueLayout.JAVA_BYTE, offset + length);
            if (b == 0) {
                break;
            }
            hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
            length++;
        }
        hash ^= length; // "" and a name of NULs differ from a real name with the same bytes
        int mask = hashes.length - 1;
        int slot = (int) (hash ^ (hash >>> 32)) & mask;
        while (ids[slot] >= 0) {
            if (hashes[slot] == hash) {
                return ids[slot];
            }
            slot = (slot + 1) & mask;
        }
        if (names.size() >= MAX_NAMES) {
            lookupsDropped++; // a probe miss in a table at most half full: no allocation either
            return -1;
        }
        byte[] bytes = new byte[length];
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        int id = names.size();
        // The target wrote these bytes: made visible once, here, for every view and file (SafeText).
        names.add(SafeText.of(new String(bytes, StandardCharsets.UTF_8)));
        hashes[slot] = hash;
        ids[slot] = id;
        if (names.size() * 2 > hashes.length) {
            grow();
        }
        return id;
    }

    private void grow() {
        long[] oldHashes = hashes;
        int[] oldIds = ids;
        hashes = new long[oldHashes.length * 2];
        ids = new int[oldIds.length * 2];
        Arrays.fill(ids, -1);
        int mask = hashes.length - 1;
        for (int i = 0; i < oldIds.length; i++) {
            if (oldIds[i] >= 0) {
                int slot = (int) (oldHashes[i] ^ (oldHashes[i] >>> 32)) & mask;
                while (ids[slot] >= 0) {
                    slot = (slot + 1) & mask;
                }
                hashes[slot] = oldHashes[i];
                ids[slot] = oldIds[i];
            }
        }
    }

    public String name(int id) {
        return id >= 0 && id < names.size() ? names.get(id) : "";
    }

    public int size() {
        return names.size();
    }

    /** Records whose name was new once {@link #MAX_NAMES} were kept (each such record counts). */
    public long lookupsDropped() {
        return lookupsDropped;
    }
}
