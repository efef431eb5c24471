package dev.infertop.process.layout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;

/**
 * Whom the calibration child runs as: the traced process's own user and group, so the target's library code
 * runs with no more rights than it already has; or {@code nobody} when that process has root anywhere in its
 * user or group ids (a root target, a setuid binary, a launched command, which infertop starts as root), and
 * when there is no process to ask. Never uid or gid 0.
 *
 * @param description for messages: "uid 1000 (the target's)", "nobody (uid 65534: the target runs as root)"
 */
record ChildCredentials(int uid, int gid, String description) {
    static final int FALLBACK_NOBODY = 65534;

    ChildCredentials {
        if (uid == 0 || gid == 0) {
            throw new IllegalArgumentException("the calibration child never runs as uid or gid 0");
        }
    }

    /** For the process {@code pid} as {@code /proc/PID/status} shows it now; nobody without a pid. */
    static ChildCredentials forTarget(OptionalInt pid) throws CalibrationException {
        if (pid.isEmpty()) {
            return nobody("no target process to take a user from");
        }
        Path status = Path.of("/proc/" + pid.getAsInt() + "/status");
        List<String> lines;
        try {
            lines = Files.readAllLines(status);
        } catch (IOException e) {
            throw new CalibrationException("cannot read " + status + " to run calibration as its user: " + e.getMessage());
        }
        int[] uids = ids(lines, "Uid:", status);
        int[] gids = ids(lines, "Gid:", status);
        for (int id : uids) {
            if (id == 0) {
                return nobody("the target has uid 0");
            }
        }
        for (int id : gids) {
            if (id == 0) {
                return nobody("the target has gid 0");
            }
        }
        // The effective ids are the rights the process's code runs with.
        return new ChildCredentials(uids[1], gids[1], "uid " + uids[1] + " gid " + gids[1] + " (the target's)");
    }

    /** Real, effective, saved and filesystem ids from a "Uid:" or "Gid:" line. */
    private static int[] ids(List<String> lines, String key, Path status) throws CalibrationException {
        for (String line : lines) {
            if (line.startsWith(key)) {
                String[] fields = line.substring(key.length()).strip().split("\\s+");
                if (fields.length == 4) {
                    try {
                        int[] ids = new int[4];
                        for (int i = 0; i < 4; i++) {
                            ids[i] = Integer.parseUnsignedInt(fields[i]);
                        }
                        return ids;
                    } catch (NumberFormatException e) {
                        break;
                    }
                }
            }
        }
        throw new CalibrationException("no readable '" + key + "' line in " + status);
    }

    /** The {@code nobody} user of /etc/passwd with its primary group, else 65534:65534. */
    static ChildCredentials nobody(String why) {
        int uid = FALLBACK_NOBODY;
        int gid = FALLBACK_NOBODY;
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] fields = line.split(":", -1);
                if (fields.length >= 4 && fields[0].equals("nobody")) {
                    int u = Integer.parseInt(fields[2]);
                    int g = Integer.parseInt(fields[3]);
                    if (u != 0 && g != 0) {
                        uid = u;
                        gid = g;
                    }
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // no usable passwd entry: the conventional number
        }
        return new ChildCredentials(uid, gid, "nobody (uid " + uid + " gid " + gid + ": " + why + ")");
    }
}
