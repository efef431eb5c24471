package dev.infertop.process.layout;

import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The mappings of one library file in this JVM, from /proc/self/maps, matched by inode: it proves that a
 * symbol came from the requested file (and not from an already loaded copy with the same soname), and it
 * bounds reads of strings the library hands back (op and type names live in its .rodata).
 */
final class LibraryMappings {
    private final Path library;
    private final List<MemoryMapping> mappings;

    private LibraryMappings(Path library, List<MemoryMapping> mappings) {
        this.library = library;
        this.mappings = mappings;
    }

    static LibraryMappings ofLoaded(Path library) throws CalibrationException {
        long inode;
        ProcessMaps maps;
        try {
            // Follows links, /proc/self/fd/N included: the inode of the file itself, not of a path to it.
            inode = ((Number) Files.getAttribute(library, "unix:ino")).longValue();
            maps = ProcessMaps.of(ProcessHandle.current().pid());
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot read its mappings in this JVM: " + e.getMessage());
        }
        List<MemoryMapping> own = maps.mappings().stream()
                .filter(m -> m.isFileBacked() && m.inode() == inode && !m.deleted())
                .toList();
        if (own.isEmpty()) {
            throw CalibrationException.of(library, "it is not mapped into this JVM after loading");
        }
        return new LibraryMappings(library, own);
    }

    boolean isOwnCode(MemorySegment symbol) {
        return containing(symbol.address()).filter(MemoryMapping::isExecutable).isPresent();
    }

    /** Fails unless {@code symbol} lies in an executable mapping of this very file. */
    void requireOwnCode(String name, MemorySegment symbol) throws CalibrationException {
        if (!isOwnCode(symbol)) {
            throw CalibrationException.of(library, name + " at 0x" + Long.toHexString(symbol.address())
                    + " resolves outside this file's code (another copy of the library answered the lookup)");
        }
    }

    /** The readable bytes from {@code address} to the end of its mapping, if the address is in this library. */
    long readableBytesFrom(long address) {
        return containing(address)
                .filter(m -> m.permissions().startsWith("r"))
                .map(m -> m.end() - address)
                .orElse(0L);
    }

    private Optional<MemoryMapping> containing(long address) {
        return mappings.stream().filter(m -> address >= m.start() && address < m.end()).findFirst();
    }
}
