package dev.infertop.process;

import dev.infertop.model.SafeText;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** The process being traced: either attached by pid or launched by infertop. */
public sealed interface TracedProcess extends AutoCloseable permits AttachedProcess, LaunchedCommand {
    int pid();

    boolean isAlive();

    /** The exit status when infertop launched it and it has exited. */
    Optional<Integer> exitStatus();

    /** Lets a launched command run (it waits at a gate until probes are attached); no-op when attached. */
    void release() throws IOException;

    /**
     * Asks a launched command to stop (SIGTERM) without waiting, so that its shutdown overlaps the probes'
     * detach; {@link #close} then waits for it. No-op for a process infertop attached to.
     */
    default void beginStop() {}

    @Override
    void close();

    /**
     * Whether thread {@code tid} is no longer one of process {@code pid}'s (/proc/PID/task/TID is gone): the
     * collector then forgets it. A thread of another process is gone from this one too.
     */
    static boolean threadGone(int pid, int tid) {
        return tid <= 0 || !Files.exists(Path.of("/proc", Integer.toString(pid), "task", Integer.toString(tid)));
    }

    /** /proc/PID/comm made visible (the process chose it: {@link SafeText}), or "?" once the process is gone. */
    static String commandName(int pid) {
        try {
            return SafeText.of(Files.readString(Path.of("/proc/" + pid + "/comm"), StandardCharsets.UTF_8).strip());
        } catch (IOException e) {
            return "?";
        }
    }
}
