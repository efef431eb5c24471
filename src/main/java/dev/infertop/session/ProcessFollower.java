package dev.infertop.session;

import dev.infertop.process.ProcessUids;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/** --follow NAME: finds the next process to trace by name; one filter for the whole run. */
final class ProcessFollower {
    private final RunControl control;
    /** One filter for the whole run: a skipped process of another user is said once, not at each restart. */
    private final FollowFilter filter;

    ProcessFollower(RunControl control, InvokingUser invoking) {
        this.control = control;
        this.filter = control.options.follow() == null ? null
                : new FollowFilter(control.options.follow(), invoking, control.options.anyUser());
    }

    /**
     * Polls /proc until a process whose comm is --follow's name (cut to 15 bytes, as the kernel keeps it) and
     * whose pid is not {@code excludePid} appears; null when infertop is stopped first.
     */
    Integer waitForProcess(int excludePid) {
        long self = ProcessHandle.current().pid();
        while (!control.stopping()) {
            try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
                for (Path entry : (Iterable<Path>) entries::iterator) {
                    String file = entry.getFileName().toString();
                    if (!file.chars().allMatch(Character::isDigit)) {
                        continue;
                    }
                    int pid = Integer.parseInt(file);
                    if (pid == excludePid || pid == self) {
                        continue;
                    }
                    try {
                        String comm = Files.readString(entry.resolve("comm")).strip();
                        Optional<ProcessUids> uids = ProcessUids.of(pid);
                        switch (filter.verdict(comm, uids)) {
                            case FOLLOW -> {
                                return pid;
                            }
                            case OTHER_USER -> filter.skipNote(pid, uids.get()).ifPresent(control::notice);
                            case IGNORE -> { }
                        }
                    } catch (IOException gone) {
                        // exited while we looked
                    }
                }
            } catch (IOException e) {
                throw new UserError("cannot list /proc: " + e.getMessage());
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            LiveScreen view = control.live();
            if (view != null && view.monitor.quitting()) {
                return null;
            }
        }
        return null;
    }
}
