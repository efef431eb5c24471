package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.OpClass;
import dev.infertop.model.ThreadLane;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live view's thread lanes rebuilt from a snapshot's trace.json: per thread, the op class (or barrier
 * wait) that took most of each 50 ms cell over the last cells of the timeline, as the live collector draws
 * them. Fed one trace event at a time.
 */
final class TraceLanes {
    static final long CELL_NS = 50_000_000L;
    static final int CELLS = 200;
    /** Threads kept: a trace names the target's threads, a few dozen; more is a crafted file. */
    static final int MAX_THREADS = 1024;
    private static final int WAIT_SLOT = OpClass.values().length;

    private final Map<Integer, TreeMap<Long, long[]>> nsBySlotByCellByTid = new HashMap<>();
    private final Map<Integer, String> lastOpByTid = new HashMap<>();
    private final Map<Integer, Long> lastOpEndByTid = new HashMap<>();
    private long endNs = Long.MIN_VALUE;

    void add(JsonNode event) {
        if (!"X".equals(event.path("ph").asText())) {
            return;
        }
        String category = event.path("cat").asText();
        boolean wait = category.equals("wait");
        if (!wait && !category.equals("op")) {
            return;
        }
        int tid = event.path("tid").asInt();
        if (!nsBySlotByCellByTid.containsKey(tid) && nsBySlotByCellByTid.size() >= MAX_THREADS) {
            return;
        }
        // Saturating: a crafted ts or dur (1e300) must neither wrap around nor be walked cell by cell.
        long from = Math.round(event.path("ts").asDouble() * 1000);
        long duration = Math.round(event.path("dur").asDouble() * 1000);
        long to = duration > 0 && from > Long.MAX_VALUE - duration ? Long.MAX_VALUE : from + Math.max(0, duration);
        endNs = Math.max(endNs, to);
        // Only the last CELLS cells before the end are ever shown, and the end is at or after this event's:
        // the cells of this event before its own last CELLS cannot be shown.
        long lastCell = Math.floorDiv(to - 1, CELL_NS);
        if (to > from && Math.floorDiv(from, CELL_NS) < lastCell - CELLS) {
            from = (lastCell - CELLS) * CELL_NS;
        }
        String name = event.path("name").asText();
        int slot = wait ? WAIT_SLOT : OpClass.of(name).ordinal();
        if (!wait && to >= lastOpEndByTid.getOrDefault(tid, Long.MIN_VALUE)) {
            lastOpEndByTid.put(tid, to);
            lastOpByTid.put(tid, name);
        }
        TreeMap<Long, long[]> cells = nsBySlotByCellByTid.computeIfAbsent(tid, t -> new TreeMap<>());
        while (from < to) {
            long cell = Math.floorDiv(from, CELL_NS);
            long until = cell >= Long.MAX_VALUE / CELL_NS ? to : Math.min(to, (cell + 1) * CELL_NS);
            cells.computeIfAbsent(cell, c -> new long[WAIT_SLOT + 1])[slot] += until - from;
            from = until;
        }
        // Cells that fell out of the shown window for good are dropped: kept, they would grow with the trace.
        long oldestShown = Math.floorDiv(endNs - 1, CELL_NS) - CELLS;
        if (!cells.isEmpty() && cells.firstKey() < oldestShown) {
            cells.headMap(oldestShown).clear();
        }
    }

    List<ThreadLane> lanes() {
        List<ThreadLane> lanes = new ArrayList<>();
        if (endNs == Long.MIN_VALUE) {
            return lanes;
        }
        long lastCell = Math.floorDiv(endNs - 1, CELL_NS);
        for (Map.Entry<Integer, TreeMap<Long, long[]>> entry : new TreeMap<>(nsBySlotByCellByTid).entrySet()) {
            byte[] cells = new byte[CELLS];
            for (int i = 0; i < CELLS; i++) {
                long[] slots = entry.getValue().get(lastCell - (CELLS - 1 - i));
                byte value = ThreadLane.IDLE;
                long best = 0;
                for (int slot = 0; slots != null && slot < slots.length; slot++) {
                    if (slots[slot] > best) {
                        best = slots[slot];
                        value = slot == WAIT_SLOT ? ThreadLane.WAIT : (byte) slot;
                    }
                }
                cells[i] = value;
            }
            lanes.add(new ThreadLane(entry.getKey(), lastOpByTid.getOrDefault(entry.getKey(), ""), CELL_NS,
                    (lastCell + 1) * CELL_NS, cells));
        }
        return lanes;
    }
}
