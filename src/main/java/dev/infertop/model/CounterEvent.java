package dev.infertop.model;

import java.util.Locale;
import java.util.Map;

/**
 * One perf event the counters layer reads: its perf_event_attr type and config, the name it was given, and
 * the role it plays in the derived figures (L3 refills for bandwidth, instructions and cycles for IPC).
 *
 * <p>Written as {@code [ROLE=]SPEC}: SPEC a symbolic name as perf(1) spells it (cycles, instructions,
 * cache-misses, LLC-load-misses, task-clock, page-faults, ...), {@code rHEX} a raw PMU event ({@code r2A}:
 * Arm's L3D_CACHE_REFILL), or {@code TYPE:CONFIG} in numbers.
 */
public record CounterEvent(String name, int type, long config, Role role) {
    /** What an event stands for in the derived figures. */
    public enum Role {
        NONE, REFILLS, INSTRUCTIONS, CYCLES;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    // enum perf_type_id (linux/perf_event.h)
    public static final int HARDWARE = 0;
    public static final int SOFTWARE = 1;
    public static final int HW_CACHE = 3;
    public static final int RAW = 4;

    private static final Map<String, long[]> SYMBOLIC = Map.ofEntries(
            Map.entry("cycles", new long[] {HARDWARE, 0}),
            Map.entry("cpu-cycles", new long[] {HARDWARE, 0}),
            Map.entry("instructions", new long[] {HARDWARE, 1}),
            Map.entry("cache-references", new long[] {HARDWARE, 2}),
            Map.entry("cache-misses", new long[] {HARDWARE, 3}),
            Map.entry("branches", new long[] {HARDWARE, 4}),
            Map.entry("branch-instructions", new long[] {HARDWARE, 4}),
            Map.entry("branch-misses", new long[] {HARDWARE, 5}),
            Map.entry("bus-cycles", new long[] {HARDWARE, 6}),
            Map.entry("stalled-cycles-frontend", new long[] {HARDWARE, 7}),
            Map.entry("stalled-cycles-backend", new long[] {HARDWARE, 8}),
            Map.entry("ref-cycles", new long[] {HARDWARE, 9}),
            Map.entry("cpu-clock", new long[] {SOFTWARE, 0}),
            Map.entry("task-clock", new long[] {SOFTWARE, 1}),
            Map.entry("page-faults", new long[] {SOFTWARE, 2}),
            Map.entry("faults", new long[] {SOFTWARE, 2}),
            Map.entry("context-switches", new long[] {SOFTWARE, 3}),
            Map.entry("cs", new long[] {SOFTWARE, 3}),
            Map.entry("cpu-migrations", new long[] {SOFTWARE, 4}),
            Map.entry("minor-faults", new long[] {SOFTWARE, 5}),
            Map.entry("major-faults", new long[] {SOFTWARE, 6}),
            // hw-cache: id | op << 8 | result << 16 (op READ 0; result ACCESS 0, MISS 1)
            Map.entry("l1-dcache-loads", new long[] {HW_CACHE, 0}),
            Map.entry("l1-dcache-load-misses", new long[] {HW_CACHE, 0 | 1 << 16}),
            Map.entry("llc-loads", new long[] {HW_CACHE, 2}),
            Map.entry("llc-load-misses", new long[] {HW_CACHE, 2 | 1 << 16}),
            Map.entry("dtlb-load-misses", new long[] {HW_CACHE, 3 | 1 << 16}));

    /** Parses {@code [ROLE=]SPEC}; throws IllegalArgumentException with what is wrong and what is accepted. */
    public static CounterEvent parse(String text) {
        String spec = text.strip();
        Role role = Role.NONE;
        int equals = spec.indexOf('=');
        if (equals >= 0) {
            String roleText = spec.substring(0, equals).strip().toLowerCase(Locale.ROOT);
            role = switch (roleText) {
                case "refills" -> Role.REFILLS;
                case "instructions" -> Role.INSTRUCTIONS;
                case "cycles" -> Role.CYCLES;
                default -> throw new IllegalArgumentException("unknown counter role '" + roleText
                        + "' in '" + text + "': use refills, instructions or cycles");
            };
            spec = spec.substring(equals + 1).strip();
        }
        if (spec.isEmpty()) {
            throw new IllegalArgumentException("empty counter event in '" + text + "'");
        }
        long[] known = SYMBOLIC.get(spec.toLowerCase(Locale.ROOT));
        if (known != null) {
            return new CounterEvent(spec, (int) known[0], known[1], role);
        }
        try {
            if (spec.matches("[rR][0-9a-fA-F]+")) {
                return new CounterEvent(spec, RAW, Long.parseUnsignedLong(spec.substring(1), 16), role);
            }
            int colon = spec.indexOf(':');
            if (colon > 0) {
                int type = (int) parseNumber(spec.substring(0, colon));
                long config = parseNumber(spec.substring(colon + 1));
                return new CounterEvent(spec, type, config, role);
            }
        } catch (NumberFormatException e) {
            // fall through to the message below
        }
        throw new IllegalArgumentException("unknown counter event '" + spec + "': use a name such as cycles, "
                + "instructions, cache-misses, LLC-load-misses, task-clock, page-faults; rHEX for a raw PMU event "
                + "(r2A); or TYPE:CONFIG in numbers");
    }

    private static long parseNumber(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        return t.startsWith("0x") ? Long.parseUnsignedLong(t.substring(2), 16) : Long.parseLong(t);
    }

    /** Whether only a hardware PMU counts it (a VM without a virtual PMU refuses these). */
    public boolean needsPmu() {
        return type == HARDWARE || type == HW_CACHE || type == RAW;
    }
}
