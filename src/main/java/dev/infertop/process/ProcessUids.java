package dev.infertop.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Who a process runs as: its real and effective uid (the "Uid:" line of /proc/PID/status). A process is a
 * user's when both are that user's: a set-uid program started by the user is not (its effective uid is the
 * file owner's), nor is a process that switched to the user only for its effective uid.
 */
public record ProcessUids(int real, int effective) {
    public static Optional<ProcessUids> of(int pid) {
        try {
            return parseStatus(Files.readString(Path.of("/proc/" + pid + "/status")));
        } catch (IOException e) {
            return Optional.empty(); // gone
        }
    }

    /** From the text of /proc/PID/status: "Uid:\treal\teffective\tsaved\tfilesystem". */
    static Optional<ProcessUids> parseStatus(String status) {
        for (String line : status.split("\n", 64)) {
            if (line.startsWith("Uid:")) {
                String[] fields = line.substring(4).strip().split("\\s+");
                if (fields.length < 2) {
                    return Optional.empty();
                }
                try {
                    return Optional.of(new ProcessUids(Integer.parseUnsignedInt(fields[0]),
                            Integer.parseUnsignedInt(fields[1])));
                } catch (NumberFormatException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    public boolean ownedBy(int uid) {
        return real == uid && effective == uid;
    }

    /** The uid to name the process's owner by (the effective one: what it may touch). */
    public int owner() {
        return effective;
    }
}
