package dev.infertop.process;

import java.nio.file.Path;

/**
 * A traced process's root directory as infertop reaches it: {@code /proc/PID/root}, which the kernel resolves
 * in that process's own root and mount namespace (a container's overlay root, a chroot), so that a path the
 * target prints in its maps names, under it, the file the target sees. Paths built here are for identity-checked
 * opens only (device and inode against the mapping): the target can make any component a symbolic link, and an
 * absolute link is followed from infertop's root, not the target's.
 */
public record TargetRoot(long pid) {
    public static TargetRoot of(long pid) {
        return new TargetRoot(pid);
    }

    /** {@code /proc/PID/root}. */
    public Path directory() {
        return Path.of("/proc", Long.toString(pid), "root");
    }

    /** {@code targetPath} (absolute, as the target sees it) under {@link #directory()}. */
    public String hostPath(String targetPath) {
        String relative = targetPath.startsWith("/") ? targetPath.substring(1) : targetPath;
        return directory() + "/" + relative;
    }

    /** The path the target sees for a path {@link #hostPath} made, or the path itself when it is not one. */
    public static String targetPath(String hostPath) {
        if (!hostPath.startsWith("/proc/")) {
            return hostPath;
        }
        int root = hostPath.indexOf("/root/", "/proc/".length());
        if (root < 0) {
            return hostPath;
        }
        String pid = hostPath.substring("/proc/".length(), root);
        return pid.chars().allMatch(c -> c >= '0' && c <= '9') && !pid.isEmpty() ? hostPath.substring(root + "/root".length())
                : hostPath;
    }

    /** Whether {@code path} lies under some process's {@code /proc/PID/root}. */
    public static boolean isUnderProcessRoot(String path) {
        return !targetPath(path).equals(path);
    }
}
