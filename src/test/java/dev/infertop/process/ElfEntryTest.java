package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What following a launcher reads of an exec'd image: ELF or not, an interpreter or not, where it starts. */
class ElfEntryTest {
    @TempDir
    Path dir;

    @Test
    void aScriptIsNoElfFileAndAProgramIs() throws Exception {
        Path script = Files.writeString(dir.resolve("run.sh"), "#!/bin/sh\nexec llama-cli\n");
        assertFalse(ElfFile.hasElfMagic(script));
        assertFalse(ElfFile.hasElfMagic(Files.writeString(dir.resolve("short"), "\u007fEL")));
        assertTrue(ElfFile.hasElfMagic(Path.of("/bin/sh").toRealPath()));
    }

    @Test
    void aDynamicProgramNamesItsLoaderAndItsEntryIsInItsCode() throws Exception {
        Path sh = Path.of("/bin/sh").toRealPath();
        long expectedEntry;
        try (var channel = Files.newByteChannel(sh)) {
            ByteBuffer header = ByteBuffer.allocate(0x20).order(ByteOrder.LITTLE_ENDIAN);
            channel.read(header);
            expectedEntry = header.getLong(0x18);
        }
        try (ElfFile elf = ElfFile.openHeaders(sh)) {
            assertTrue(elf.hasInterpreter());
            assertEquals(expectedEntry, elf.entryPoint());
            long offset = elf.fileOffsetOf(elf.entryPoint());
            assertTrue(offset > 0 && offset < Files.size(sh), "entry at file offset " + offset);
        }
    }

    @Test
    void aSharedLibraryHasNoInterpreter() throws Exception {
        try (ElfFile elf = ElfFile.openHeaders(Path.of("/lib/x86_64-linux-gnu/libm.so.6"))) { // libc.so.6 runs too: it has one
            assertFalse(elf.hasInterpreter());
        }
    }
}
