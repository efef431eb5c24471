package dev.infertop.target;

import dev.infertop.ffi.LibC;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A command infertop starts and traces from its first instruction. The child is a shell that blocks on a
 * FIFO (the gate) and then execs the command in place, keeping its pid: probes are attached to that pid
 * while it waits, so nothing the command does happens before they are in place. Run as another user, the
 * shell stays infertop's (it alone opens the root-only gate) and execs setpriv, which drops to that user and
 * execs the command: the pid is still the same, and the gate needs no permission for that user.
 */
public final class LaunchedCommand implements TracedProcess {
    private static final String GATE = "read -r _ < \"$0\" || exit 126; rm -f \"$0\"; ";

    /** Where the command's output goes. */
    public enum Output {
        /** the terminal, like any child */
        INHERIT,
        /** stdout to infertop's stderr, so infertop's own stdout (JSON) stays parseable */
        STDOUT_TO_STDERR,
        /** both to a log file */
        LOG_FILE
    }

    /** A user to run the command as, and the setpriv that switches to it. */
    public record RunAs(UserAccount user, Path setpriv) {}

    private final Process process;
    private final Path gateDirectory;
    private final Path gate;
    private boolean released;

    private LaunchedCommand(Process process, Path gateDirectory, Path gate) {
        this.process = process;
        this.gateDirectory = gateDirectory;
        this.gate = gate;
    }

    /**
     * @param executable  the resolved executable (checked to exist beforehand)
     * @param environment variables added to infertop's own environment for the command
     * @param logFile     with {@link Output#LOG_FILE}: the file the command's output is appended to (opened
     *                    by the gate's shell, so the user the command runs as needs no access to it)
     * @param runAs       the user to run the command as, through {@code setpriv} (see {@link Setpriv}); null:
     *                    infertop's own user
     */
    public static LaunchedCommand start(Path executable, List<String> arguments, java.util.Map<String, String> environment,
                                        Output output, Path logFile, RunAs runAs) throws IOException {
        Path directory = Files.createTempDirectory("infertop-gate-");
        Path gate = directory.resolve("gate");
        LibC.mkfifo(gate.toString(), 0600);
        String exec = switch (output) {
            case INHERIT -> "exec \"$@\"";
            case STDOUT_TO_STDERR -> "exec \"$@\" 1>&2";
            case LOG_FILE -> "exec \"$@\" >>\"$INFERTOP_TARGET_LOG\" 2>&1 </dev/null"; // the terminal is not theirs
        };
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", GATE + exec, gate.toString()));
        if (runAs != null) {
            argv.addAll(Setpriv.prefix(runAs.setpriv(), runAs.user()));
        }
        argv.add(executable.toString());
        argv.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(argv).inheritIO();
        builder.environment().putAll(environment);
        if (runAs != null) {
            // What login(1) and sudo -u set: programs find their config and caches in the user's home, not root's.
            builder.environment().put("HOME", runAs.user().home());
            builder.environment().put("USER", runAs.user().name());
            builder.environment().put("LOGNAME", runAs.user().name());
        }
        if (output == Output.LOG_FILE) {
            builder.environment().put("INFERTOP_TARGET_LOG", logFile.toString());
        }
        Process process = dev.infertop.ffi.OwnPriority.start(builder);
        return new LaunchedCommand(process, directory, gate);
    }

    @Override
    public int pid() {
        return (int) process.pid();
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public Optional<Integer> exitStatus() {
        return process.isAlive() ? Optional.empty() : Optional.of(process.exitValue());
    }

    public Optional<Integer> waitFor(long timeoutMs) throws InterruptedException {
        return process.waitFor(timeoutMs, TimeUnit.MILLISECONDS) ? Optional.of(process.exitValue()) : Optional.empty();
    }

    @Override
    public void release() throws IOException {
        if (released) {
            return;
        }
        // Opening a FIFO for writing blocks until the reader opens it: do it off-thread, bounded.
        CompletableFuture<Void> open = CompletableFuture.runAsync(() -> {
            try (OutputStream out = Files.newOutputStream(gate)) {
                out.write('\n');
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            open.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            open.cancel(true);
            throw new IOException("the launched command did not reach its start gate within 10 s");
        } catch (ExecutionException e) {
            throw new IOException("cannot start the command: " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the command");
        }
        released = true;
    }

    @Override
    public void beginStop() {
        if (process.isAlive()) {
            process.destroy(); // SIGTERM now; close() waits for it
        }
    }

    /** Stops the command if it still runs (SIGTERM, then SIGKILL after 3 s) and removes the gate. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(3, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(3, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try {
            Files.deleteIfExists(gate);
            Files.deleteIfExists(gateDirectory);
        } catch (IOException e) {
            // a temp directory left behind is harmless
        }
    }
}
