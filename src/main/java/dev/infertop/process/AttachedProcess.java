package dev.infertop.process;

import dev.infertop.ffi.Pidfd;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A process that was running before infertop; infertop never stops or signals it. Whether it still runs is asked
 * through a process descriptor opened at the attach (the collector asks at every wake-up), by pid only on a kernel
 * without pidfd_open (before 5.3).
 */
public final class AttachedProcess implements TracedProcess {
    private final int pid;
    private final Pidfd pidfd;

    private AttachedProcess(int pid, Pidfd pidfd) {
        this.pid = pid;
        this.pidfd = pidfd;
    }

    public static AttachedProcess of(int pid) throws TargetException {
        if (pid <= 0 || !Files.isDirectory(Path.of("/proc/" + pid))) {
            throw new TargetException("no such process: " + pid);
        }
        Pidfd pidfd;
        try {
            pidfd = Pidfd.open(pid);
        } catch (IOException e) {
            pidfd = null; // gone already (isAlive says so by pid), or a kernel without pidfd_open
        }
        return new AttachedProcess(pid, pidfd);
    }

    @Override
    public int pid() {
        return pid;
    }

    @Override
    public boolean isAlive() {
        return pidfd != null ? !pidfd.exited() : ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    @Override
    public Optional<Integer> exitStatus() {
        return Optional.empty();
    }

    @Override
    public void release() {}

    @Override
    public void close() {
        if (pidfd != null) {
            pidfd.close();
        }
    }
}
