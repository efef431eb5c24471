package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infertop.ffi.LibC;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A library the target controls, made hostile one header field at a time: each bound of the ELF reader is
 * hit with a real gcc-built library whose one field is patched, and must fail with one TargetException in
 * bounded time, never loop, throw another exception or allocate what the field says.
 */
class HostileElfTest {
    private static final int SH_OFFSET = 0x18, SH_SIZE = 0x20, SH_ENTSIZE = 0x38;
    private static final Duration QUICK = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    /** A copy of {@code library} with one 8-byte field of section {@code name}'s header set to {@code value}. */
    static Path patchSection(Path library, String name, int field, long value, Path into) throws Exception {
        int index;
        try (ElfFile elf = ElfFile.open(library)) {
            List<ElfSection> sections = elf.sections();
            index = -1;
            for (int i = 0; i < sections.size(); i++) {
                if (sections.get(i).name().equals(name)) {
                    index = i;
                    break;
                }
            }
            assertTrue(index >= 0, name + " not in " + library);
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(library)).order(ByteOrder.LITTLE_ENDIAN);
        long headers = bytes.getLong(0x28);
        int entrySize = Short.toUnsignedInt(bytes.getShort(0x3a));
        bytes.putLong((int) (headers + (long) index * entrySize + field), value);
        Files.write(into, bytes.array());
        return into;
    }

    private Path callsLibrary() throws Exception {
        return CallSiteScannerTest.compileCallsLibrary(dir, false);
    }

    private static TargetException refused(Path file) {
        return assertTimeoutPreemptively(QUICK, () -> assertThrows(TargetException.class, () -> {
            try (ElfFile elf = ElfFile.open(file)) {
                PltResolver.of(elf);
                for (ElfSymbol function : elf.functions()) {
                    CallSiteScanner.directCalls(elf, function);
                }
            }
        }));
    }

    @Test
    void pltEntrySizeOfTwoToThe32IsRefusedNotLoopedOver() throws Exception {
        // (int) 2^32 is 0: the stub loop's stride was 0 and it never ended (issue 14, point 3).
        Path hostile = patchSection(callsLibrary(), ".plt", SH_ENTSIZE, 1L << 32, dir.resolve("entsize.so"));
        TargetException e = refused(hostile);
        assertTrue(e.getMessage().contains(".plt has stubs of 4294967296 bytes"), e.getMessage());
    }

    @Test
    void symbolTableThatClaimsMoreThanTheFileIsRefused() throws Exception {
        Path hostile = patchSection(callsLibrary(), ".symtab", SH_SIZE, 1L << 40, dir.resolve("count.so"));
        TargetException e = refused(hostile);
        assertTrue(e.getMessage().contains(".symtab (1099511627776 bytes at offset") && e.getMessage()
                .contains("lies outside the file"), e.getMessage());
    }

    @Test
    void sectionOffsetPastTheEndIsRefused() throws Exception {
        Path library = callsLibrary();
        Path hostile = patchSection(library, ".dynsym", SH_OFFSET, Files.size(library) + 4096,
                dir.resolve("offset.so"));
        TargetException e = refused(hostile);
        assertTrue(e.getMessage().contains(".dynsym") && e.getMessage().contains("lies outside the file"),
                e.getMessage());
        Path wrapped = patchSection(library, ".rela.plt", SH_OFFSET, -16, dir.resolve("negative.so"));
        assertTrue(refused(wrapped).getMessage().contains("lies outside the file"));
    }

    @Test
    void symbolEntrySizeBelowAnElf64SymbolIsRefused() throws Exception {
        Path hostile = patchSection(callsLibrary(), ".symtab", SH_ENTSIZE, 1, dir.resolve("symsize.so"));
        assertTrue(refused(hostile).getMessage().contains("has symbols of 1 bytes"));
    }

    @Test
    void relocationSizeOutsideTheFileIsRefusedAsTargetException() throws Exception {
        Path hostile = patchSection(callsLibrary(), ".rela.plt", SH_SIZE, Long.MAX_VALUE, dir.resolve("rela.so"));
        assertTrue(refused(hostile).getMessage().contains("lies outside the file"));
    }

    @Test
    void stringTableWithoutItsTerminatorIsRefused() throws Exception {
        // .strtab cut to 1 byte: every local name now starts past its table's end.
        Path hostile = patchSection(callsLibrary(), ".strtab", SH_SIZE, 1, dir.resolve("strtab.so"));
        assertTrue(refused(hostile).getMessage().contains("outside its string table"));
    }

    @Test
    void readsAndScannedFunctionsAreBounded() throws Exception {
        try (ElfFile elf = ElfFile.open(callsLibrary())) {
            ElfSymbol function = elf.functions().getFirst();
            TargetException big = assertThrows(TargetException.class,
                    () -> elf.readBytesAtVaddr(function.vaddr(), ElfFile.MAX_READ_BYTES + 1));
            assertTrue(big.getMessage().contains("more than " + ElfFile.MAX_READ_BYTES), big.getMessage());
            ElfSymbol huge = new ElfSymbol(function.name(), function.vaddr(), CallSiteScanner.MAX_FUNCTION_BYTES + 1L,
                    function.binding(), function.table());
            TargetException scan = assertThrows(TargetException.class, () -> CallSiteScanner.directCalls(elf, huge));
            assertTrue(scan.getMessage().contains("at most " + CallSiteScanner.MAX_FUNCTION_BYTES + " scanned"),
                    scan.getMessage());
        }
    }

    @Test
    void aFifoInPlaceOfALibraryIsRefusedWithoutBlocking() throws Exception {
        Path fifo = dir.resolve("libggml-fifo.so");
        LibC.mkfifo(fifo.toString(), 0600);
        TargetException e = assertTimeoutPreemptively(QUICK,
                () -> assertThrows(TargetException.class, () -> ElfFile.open(fifo)));
        assertEquals(fifo + ": not a regular file (a FIFO)", e.getMessage());
        assertTimeoutPreemptively(QUICK, () -> assertTrue(ElfFile.peekMachine(fifo).isEmpty()));
        Path link = Files.createSymbolicLink(dir.resolve("libggml-link.so"), fifo);
        assertTimeoutPreemptively(QUICK, () -> assertThrows(TargetException.class, () -> ElfFile.open(link)));
    }

    @Test
    void aFileOtherThanTheMappedOneIsRefused() throws Exception {
        Path library = callsLibrary();
        long inode = (Long) Files.getAttribute(library, "unix:ino");
        String device = MemoryMapping.deviceAsMapsPrintsIt((Long) Files.getAttribute(library, "unix:dev"));
        MemoryMapping same = new MemoryMapping(0x1000, 0x2000, "r-xp", 0, device, inode, library.toString(), false);
        try (ElfFile elf = ElfFile.open(library, same)) {
            assertTrue(elf.functions().size() > 0);
        }
        MemoryMapping other = new MemoryMapping(0x1000, 0x2000, "r-xp", 0, device, inode + 1, library.toString(), false);
        TargetException e = assertThrows(TargetException.class, () -> ElfFile.open(library, other));
        assertTrue(e.getMessage().contains("is no longer the file the process mapped"), e.getMessage());
    }

    @Test
    void aLibraryTruncatedWhileMappedIsRefusedNotACrash() throws Exception {
        Path library = Files.copy(callsLibrary(), dir.resolve("libggml-shrinking.so"));
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSymbol function = elf.functions().stream().filter(f -> f.sizeBytes() > 0).findFirst().orElseThrow();
            try (java.nio.channels.FileChannel file = java.nio.channels.FileChannel.open(library,
                    java.nio.file.StandardOpenOption.WRITE)) {
                file.truncate(0); // its owner shrinks it: the mapped pages now fault
            }
            TargetException e = assertThrows(TargetException.class,
                    () -> elf.readBytesAtVaddr(function.vaddr(), (int) function.sizeBytes()));
            assertEquals(library + " was truncated while infertop read it", e.getMessage());
        }
    }

    @Test
    void aScanThatTakesTooLongIsGivenUpAndItsThreadInterrupted() throws Exception {
        java.util.concurrent.CountDownLatch interrupted = new java.util.concurrent.CountDownLatch(1);
        long started = System.nanoTime();
        TargetException e = assertThrows(TargetException.class, () -> ScanTimeLimit.run("libslow.so", 200, () -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException stop) {
                interrupted.countDown();
            }
            return null;
        }));
        assertTrue(System.nanoTime() - started < 5_000_000_000L);
        assertEquals("libslow.so: still reading it after 0.2 s: given up (--patience N multiplies this limit)",
                e.getMessage());
        assertTrue(interrupted.await(5, java.util.concurrent.TimeUnit.SECONDS), "the scan's thread was interrupted");
        TargetException bug = assertThrows(TargetException.class, () -> ScanTimeLimit.run("libbug.so", 1000,
                () -> { throw new ArrayIndexOutOfBoundsException("Index 9 out of bounds for length 4"); }));
        assertEquals("libbug.so: cannot read it (ArrayIndexOutOfBoundsException: Index 9 out of bounds for length 4)",
                bug.getMessage());
    }
}
