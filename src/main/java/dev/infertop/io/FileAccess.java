package dev.infertop.io;

import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Set;

/**
 * Who may read what infertop writes about a traced process (snapshot directories, the operator DAG of
 * {@code --dag} and the live view's d): the model path, prompt lengths, the target's and other processes'
 * names. The modes are set exactly, whatever the umask: infertop runs as root, often from a shell whose umask
 * (022) would leave such files readable by every user of the machine.
 */
public enum FileAccess {
    /** The default: directories 0700, files 0600; only their owner (root, as infertop runs) reads them. */
    PRIVATE("rwx------", "rw-------"),
    /** {@code --snapshot-mode shared}: directories 0755, files 0644, for output others are meant to read. */
    SHARED("rwxr-xr-x", "rw-r--r--");

    private final Set<PosixFilePermission> directory;
    private final Set<PosixFilePermission> file;

    FileAccess(String directory, String file) {
        this.directory = Set.copyOf(PosixFilePermissions.fromString(directory));
        this.file = Set.copyOf(PosixFilePermissions.fromString(file));
    }

    public Set<PosixFilePermission> directoryPermissions() {
        return directory;
    }

    /** The directory mode as mode bits (0700 or 0755). */
    public int directoryMode() {
        return bits(directory);
    }

    /** The file mode as mode bits (0600 or 0644). */
    public int fileMode() {
        return bits(file);
    }

    private static int bits(Set<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission permission : permissions) {
            mode |= 0400 >> permission.ordinal(); // OWNER_READ first, OTHERS_EXECUTE last: 0400 down to 01
        }
        return mode;
    }

    /** The word for it on the command line: "private" or "shared". */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** "private" or "shared"; one-line IllegalArgumentException otherwise. */
    public static FileAccess parse(String word) {
        for (FileAccess access : values()) {
            if (access.id().equals(word)) {
                return access;
            }
        }
        throw new IllegalArgumentException("'" + word + "' is neither private (0700 directories, 0600 files) nor "
                + "shared (0755, 0644)");
    }
}
