package dev.infertop.process;

import dev.infertop.ffi.LibC;
import dev.infertop.ffi.RegularFile;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Opens the file a process maps, never what its printed path may name by now: the target owns the directories
 * its libraries sit in and can swap a library's name for a symbolic link to a FIFO, a terminal or a device
 * (/dev/watchdog, which reboots the host when opened and closed) between the maps read and the open.
 *
 * <p>First through {@code /proc/PID/map_files/START-END} (the file the kernel mapped there, whatever its name now
 * names); where that cannot be opened (no CAP_SYS_ADMIN; the range unmapped since) by the printed path without
 * following a link at its end. Either way {@link RegularFile} names the file with O_PATH, so nothing is opened
 * before it is found to be a regular file of the mapping's device and inode; anything else is refused with an
 * IOException whose reason is one line.
 */
public final class MappedFile {
    private MappedFile() {}

    /** {@code shownAs} (the mapping's path, or the path infertop opens it by) as {@code mapping} maps it. */
    public static RegularFile open(Path shownAs, MemoryMapping mapping, long maxBytes) throws IOException {
        RegularFile.Identity mapped = mapping::isFile;
        Optional<String> mapFiles = mapping.mapFilesPath();
        if (mapFiles.isPresent()) {
            try {
                return RegularFile.open(Path.of(mapFiles.get()), maxBytes, true, mapped);
            } catch (AccessDeniedException | NoSuchFileException e) {
                // not root enough for map_files, or unmapped since: the path, held to the mapping just below
            }
        }
        return RegularFile.open(shownAs, maxBytes, isMagicLink(shownAs), mapped);
    }

    /**
     * An O_PATH descriptor (nothing opened) of the file {@code mapping} maps, found as {@link #open} finds it: for
     * the kernel to resolve through {@code /proc/self/fd/N}. The caller closes it.
     */
    public static int named(Path shownAs, MemoryMapping mapping) throws IOException {
        RegularFile.Identity mapped = mapping::isFile;
        Optional<String> mapFiles = mapping.mapFilesPath();
        if (mapFiles.isPresent()) {
            try {
                return RegularFile.namedOnly(Path.of(mapFiles.get()), true, mapped);
            } catch (AccessDeniedException | NoSuchFileException e) {
                // as in open
            }
        }
        return RegularFile.namedOnly(shownAs, isMagicLink(shownAs), mapped);
    }

    /** Whether {@code shownAs} names the mapped file itself now (no link at its end, same device and inode). */
    public static boolean namesMappedFile(Path shownAs, MemoryMapping mapping) {
        try {
            LibC.closeQuietly(RegularFile.namedOnly(shownAs, isMagicLink(shownAs), mapping::isFile));
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The mapping among {@code mappings} of the regular file {@code name} resolves to now (nothing is opened: an
     * O_PATH look); empty when it resolves to none of them or cannot be looked at. Throws, with the reason in one
     * line, when it resolves to something other than a regular file (a link swapped in to a FIFO or a device).
     */
    public static Optional<MemoryMapping> mappingNamedBy(Path name, List<MemoryMapping> mappings)
            throws FileSystemException {
        int fd;
        try {
            fd = LibC.openPathOnly(name.toString(), true);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        try {
            LibC.FileStatus status = LibC.statx(fd);
            if ((status.mode() & 0xf000) != 0x8000) {
                throw new FileSystemException(name.toString(), null, RegularFile.notRegular(status.mode()));
            }
            return mappings.stream().filter(m -> m.isFile(status.device(), status.inode())).findFirst();
        } catch (FileSystemException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        } finally {
            LibC.closeQuietly(fd);
        }
    }

    /**
     * ProcessMaps may have chosen map_files itself (a file the host cannot reach by its path): a magic link that
     * must be followed. Any other path from the maps names the file itself, never a link.
     */
    private static boolean isMagicLink(Path shownAs) {
        return shownAs.startsWith("/proc") && shownAs.getNameCount() == 4
                && shownAs.getName(2).toString().equals("map_files");
    }
}
