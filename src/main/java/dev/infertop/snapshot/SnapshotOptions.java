package dev.infertop.snapshot;

import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.io.FileAccess;

import java.time.LocalDateTime;

/**
 * When and where snapshot directories are written.
 *
 * @param pathPattern   directory name pattern (%p pid, %t time, %n number, %% percent)
 * @param everySeconds  write one every this many seconds (0: never on a timer)
 * @param onExit        write one with the final totals when tracing ends
 * @param flightSeconds how far back the timeline (trace.json) reaches (0: no flight recorder)
 * @param access        who may read the directories, and the DAG files of --dag and the live view's d
 *                      (--snapshot-mode)
 */
public record SnapshotOptions(String pathPattern, double everySeconds, boolean onExit, double flightSeconds,
                              FileAccess access) {
    public static final String DEFAULT_PATTERN = "infertop-%p-%t";
    public static final double DEFAULT_FLIGHT_SECONDS = 10;
    public static final SnapshotOptions DEFAULTS = new SnapshotOptions(DEFAULT_PATTERN, 0, false,
            DEFAULT_FLIGHT_SECONDS);

    /** Private snapshots (0700 directories, 0600 files), the default. */
    public SnapshotOptions(String pathPattern, double everySeconds, boolean onExit, double flightSeconds) {
        this(pathPattern, everySeconds, onExit, flightSeconds, FileAccess.PRIVATE);
    }

    public SnapshotOptions {
        java.util.Objects.requireNonNull(access, "access");
    }

    /** The problem with these options as one line, or null when they are fine. */
    public String problem() {
        if (pathPattern == null || pathPattern.isBlank()) {
            return "--snapshot-dir needs a directory pattern, e.g. infertop-%p-%t";
        }
        try {
            SnapshotDirectoryWriter.expand(pathPattern, 1, LocalDateTime.now(), 1);
        } catch (IllegalArgumentException e) {
            return "--snapshot-dir: " + e.getMessage();
        }
        if (!(everySeconds == 0 || (everySeconds >= 0.1 && everySeconds <= 86_400))) {
            return "--snapshot-every must be between 0.1 and 86400 seconds, got " + everySeconds;
        }
        if (!(flightSeconds >= 0 && flightSeconds <= 3600)) {
            return "--flight-seconds must be between 0 (no timeline) and 3600, got " + flightSeconds;
        }
        return null;
    }
}
