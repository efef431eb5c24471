package dev.infertop.model;

import dev.infertop.io.ConfigFiles;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CounterSetsTest {
    @Test
    void eventsBySymbolicNameRawAndNumbers() {
        assertEquals(new CounterEvent("cycles", 0, 0, CounterEvent.Role.CYCLES), CounterEvent.parse("cycles=cycles"));
        assertEquals(new CounterEvent("instructions", 0, 1, CounterEvent.Role.NONE), CounterEvent.parse("instructions"));
        assertEquals(new CounterEvent("cache-misses", 0, 3, CounterEvent.Role.REFILLS),
                CounterEvent.parse("refills=cache-misses"));
        assertEquals(new CounterEvent("LLC-load-misses", 3, 2 | 1 << 16, CounterEvent.Role.NONE),
                CounterEvent.parse("LLC-load-misses"));
        assertEquals(new CounterEvent("r2A", 4, 0x2A, CounterEvent.Role.REFILLS), CounterEvent.parse("refills=r2A"));
        assertEquals(new CounterEvent("task-clock", 1, 1, CounterEvent.Role.NONE), CounterEvent.parse("task-clock"));
        assertEquals(new CounterEvent("1:0x4", 1, 4, CounterEvent.Role.NONE), CounterEvent.parse("1:0x4"));
        assertTrue(CounterEvent.parse("r13").needsPmu());
        assertTrue(!CounterEvent.parse("page-faults").needsPmu());
    }

    @Test
    void badEventsSayWhatIsAccepted() {
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> CounterEvent.parse("cylces"));
        assertTrue(unknown.getMessage().startsWith("unknown counter event 'cylces': use a name such as cycles"),
                unknown.getMessage());
        IllegalArgumentException role = assertThrows(IllegalArgumentException.class, () -> CounterEvent.parse("ipc=cycles"));
        assertEquals("unknown counter role 'ipc' in 'ipc=cycles': use refills, instructions or cycles", role.getMessage());
    }

    @Test
    void theShippedFileHasASetPerFamilyAndSoftware() {
        CounterSets sets = ConfigFiles.counterSets();
        CounterSet x86 = sets.defaultFor("x86_64");
        assertEquals("x86_64", x86.name());
        assertEquals(64, x86.lineBytes());
        assertEquals(0, x86.indexOf(CounterEvent.Role.REFILLS));
        assertEquals(1, x86.indexOf(CounterEvent.Role.INSTRUCTIONS));
        assertEquals(2, x86.indexOf(CounterEvent.Role.CYCLES));
        CounterSet arm = sets.defaultFor("arm64");
        assertEquals("arm64", arm.name());
        assertEquals(new CounterEvent("r2A", 4, 0x2A, CounterEvent.Role.REFILLS), arm.events().get(0));
        assertEquals(List.of("task-clock", "page-faults", "context-switches", "cpu-migrations"),
                sets.choose("software", "x86_64").eventNames());
    }

    @Test
    void laterLinesReplaceASetAndChoiceTakesNamesOrEvents() {
        CounterSets sets = CounterSets.parse("""
                # comment
                x86_64  x86_64  64  cycles instructions
                mine    any     128 task-clock
                x86_64  x86_64  64  refills=LLC-load-misses instructions=instructions cycles=cycles
                """);
        assertEquals(List.of("mine", "x86_64"), sets.names());
        assertEquals("LLC-load-misses", sets.defaultFor("x86_64").events().get(0).name());
        assertEquals("mine", sets.defaultFor("arm64").name(), "no arm64 set: the first for any architecture");
        assertEquals(sets.defaultFor("x86_64"), sets.choose(null, "x86_64"));
        assertEquals(sets.defaultFor("x86_64"), sets.choose("auto", "x86_64"));
        CounterSet custom = sets.choose("task-clock,cycles=cycles", "x86_64");
        assertEquals("custom", custom.name());
        assertEquals(64, custom.lineBytes(), "the default set's line size");
        assertEquals(1, custom.indexOf(CounterEvent.Role.CYCLES));
    }

    @Test
    void badLinesNameTheirPlace() {
        assertEquals("text:1: expected NAME ARCH LINE_BYTES EVENT..., got 'x x86_64 64'",
                assertThrows(IllegalArgumentException.class, () -> CounterSets.parse("x x86_64 64")).getMessage());
        assertEquals("text:2: architecture 'riscv': use x86_64, arm64 or any",
                assertThrows(IllegalArgumentException.class,
                        () -> CounterSets.parse("a any 64 cycles\nb riscv 64 cycles")).getMessage());
        assertEquals("text:1: counter set 'big' has 5 events: give 1 to 4",
                assertThrows(IllegalArgumentException.class,
                        () -> CounterSets.parse("big any 64 cycles cycles cycles cycles cycles")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> CounterSets.parse("a any 64 cycles").choose("nope", "x86_64"));
    }
}
