package dev.infertop.process;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** A process that was running before infertop; infertop never stops or signals it. */
public record AttachedProcess(int pid) implements TracedProcess {
    public static AttachedProcess of(int pid) throws TargetException {
        if (pid <= 0 || !Files.isDirectory(Path.of("/proc/" + pid))) {
            throw new TargetException("no such process: " + pid);
        }
        return new AttachedProcess(pid);
    }

    @Override
    public boolean isAlive() {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    @Override
    public Optional<Integer> exitStatus() {
        return Optional.empty();
    }

    @Override
    public void release() {}

    @Override
    public void close() {}
}
