package dev.infertop.process;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The indexed lookups give exactly what a scan in table order gives, on random tables with repeated addresses
 * (several names at one address, as aliases have), and on random segment tables, sorted or not.
 */
class AddressIndexTest {
    @Test
    void functionLookupsEqualAScanInTableOrder() {
        SplittableRandom random = new SplittableRandom(41);
        for (int round = 0; round < 200; round++) {
            int count = random.nextInt(0, 300);
            long span = 1 + random.nextInt(1, 400); // few distinct addresses: many repeats
            List<ElfSymbol> functions = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                long vaddr = random.nextInt(8) == 0 ? -random.nextLong(0, span) : random.nextLong(0, span);
                functions.add(new ElfSymbol("f" + i, vaddr, random.nextLong(0, 64),
                        random.nextBoolean() ? SymbolBinding.GLOBAL : SymbolBinding.LOCAL, SymbolTable.DYNSYM));
            }
            AddressIndex index = new AddressIndex(functions);
            for (int probe = 0; probe < 200; probe++) {
                long vaddr = random.nextInt(8) == 0 ? -random.nextLong(0, span + 2) : random.nextLong(0, span + 2);
                Optional<ElfSymbol> first = functions.stream().filter(f -> f.vaddr() == vaddr).findFirst();
                List<ElfSymbol> all = functions.stream().filter(f -> f.vaddr() == vaddr).toList();
                assertEquals(first, index.first(vaddr), "first at " + vaddr + " of " + functions);
                assertEquals(all, index.all(vaddr), "all at " + vaddr + " of " + functions);
            }
        }
    }

    @Test
    void segmentLookupsEqualAScanInTableOrder() {
        SplittableRandom random = new SplittableRandom(8);
        int searchable = 0;
        for (int round = 0; round < 2000; round++) {
            int count = random.nextInt(0, 12);
            List<LoadSegment> segments = new ArrayList<>();
            boolean ordered = random.nextBoolean();
            long next = random.nextLong(0, 64);
            for (int i = 0; i < count; i++) {
                long vaddr;
                long size;
                if (ordered) { // as a linker writes them, sometimes touching, sometimes empty
                    vaddr = next + random.nextLong(0, 3);
                    size = random.nextInt(6) == 0 ? 0 : random.nextLong(1, 40);
                    next = vaddr + size;
                } else { // anything: overlapping, out of order, negative, wrapping
                    vaddr = switch (random.nextInt(4)) {
                        case 0 -> Long.MAX_VALUE - random.nextLong(0, 50);
                        case 1 -> -random.nextLong(0, 200);
                        default -> random.nextLong(0, 300);
                    };
                    size = random.nextInt(5) == 0 ? Long.MAX_VALUE - random.nextLong(0, 10) : random.nextLong(0, 80);
                }
                segments.add(new LoadSegment(vaddr, random.nextLong(0, 1000), size, size, 5));
            }
            boolean sorted = ElfFile.sortedAndDisjoint(segments);
            searchable += sorted ? 1 : 0;
            for (int probe = 0; probe < 100; probe++) {
                long vaddr = switch (random.nextInt(5)) {
                    case 0 -> Long.MAX_VALUE - random.nextLong(0, 60);
                    case 1 -> -random.nextLong(0, 250);
                    default -> random.nextLong(0, 400);
                };
                LoadSegment linear = segments.stream().filter(s -> s.containsFileBacked(vaddr)).findFirst()
                        .orElse(null);
                assertEquals(linear, ElfFile.segmentContaining(segments, sorted, vaddr),
                        "at " + vaddr + " in " + segments + " (searchable " + sorted + ")");
            }
        }
        assertEquals(true, searchable > 500, "the binary search was tried: " + searchable + " tables");
    }
}
