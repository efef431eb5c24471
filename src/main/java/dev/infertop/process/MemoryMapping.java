package dev.infertop.process;

/**
 * One line of /proc/PID/maps.
 *
 * @param path    the mapped file's path as the kernel prints it, without the " (deleted)" mark; a pseudo name
 *                such as {@code [vdso]} or {@code [heap]}; or empty for an anonymous mapping
 * @param deleted whether the file was deleted or replaced after it was mapped (its path now names another
 *                file or none, so probes must not be attached through it)
 * @param pid     the process whose maps these are (0: not known, maps text parsed on its own): names
 *                {@link #mapFilesPath()}
 */
public record MemoryMapping(long start, long end, String permissions, long fileOffset, String device, long inode,
                            String path, boolean deleted, long pid) {

    public MemoryMapping(long start, long end, String permissions, long fileOffset, String device, long inode,
                         String path, boolean deleted) {
        this(start, end, permissions, fileOffset, device, inode, path, deleted, 0);
    }

    /** This mapping of the process {@code ofPid}. */
    public MemoryMapping withPid(long ofPid) {
        return new MemoryMapping(start, end, permissions, fileOffset, device, inode, path, deleted, ofPid);
    }

    /**
     * {@code /proc/PID/map_files/START-END}: the file the kernel mapped here, whatever its path names now (opened
     * by root only: CAP_SYS_ADMIN); empty when the process is not known.
     */
    public java.util.Optional<String> mapFilesPath() {
        return pid <= 0 ? java.util.Optional.empty() : java.util.Optional.of("/proc/" + pid + "/map_files/"
                + Long.toHexString(start) + "-" + Long.toHexString(end));
    }

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
