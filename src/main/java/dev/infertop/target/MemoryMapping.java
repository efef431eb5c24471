package dev.infertop.target;

/**
 * One line of /proc/PID/maps.
 *
 * @param path    the mapped file's path as the kernel prints it, without the " (deleted)" mark; a pseudo name
 *                such as {@code [vdso]} or {@code [heap]}; or empty for an anonymous mapping
 * @param deleted whether the file was deleted or replaced after it was mapped (its path now names another
 *                file or none, so probes must not be attached through it)
 */
public record MemoryMapping(long start, long end, String permissions, long fileOffset, String device, long inode,
                            String path, boolean deleted) {

    /** A device number (st_dev) as maps prints it: "major:minor" in hex (glibc's major()/minor() split). */
    public static String deviceAsMapsPrintsIt(long dev) {
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        return String.format("%02x:%02x", major, minor);
    }

    /** Whether a file of this device number and inode is the one mapped here. */
    public boolean isFile(long dev, long fileInode) {
        return fileInode == inode && deviceAsMapsPrintsIt(dev).equals(device);
    }

    public long sizeBytes() {
        return end - start;
    }

    public boolean isExecutable() {
        return permissions.indexOf('x') >= 0;
    }

    /** Backed by a file on disk (inode ≠ 0, absolute path), as opposed to anonymous memory or [vdso]-like. */
    public boolean isFileBacked() {
        return inode != 0 && path.startsWith("/");
    }

    public boolean isAnonymous() {
        return path.isEmpty();
    }

    /** A kernel-named region: [heap], [stack], [vdso], [vvar], [vsyscall], [anon:…]. */
    public boolean isPseudo() {
        return path.startsWith("[");
    }
}
