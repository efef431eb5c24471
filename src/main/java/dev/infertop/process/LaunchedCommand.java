package dev.infertop.process;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.ffi.Pidfd;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A command infertop starts and traces from its first instruction. It starts as {@code launch-target}
 * (native/tools/launch-target.c), which makes a new session with no controlling terminal, joins a fresh session
 * keyring, switches to the user, and then blocks on its stdin, the start gate (a pipe only infertop holds),
 * before it execs the command in place, keeping its pid: probes are attached to that pid while it waits, so
 * nothing the command does happens before they are in place. Its stdin is then /dev/null; its stdout and stderr
 * are pipes whose contents infertop relays (never a descriptor of infertop's terminal); its environment is
 * {@link #environment the few variables a login sets} and what was asked for. It and everything it starts are in
 * a cgroup of their own ({@link TreeCgroup}), killed as one when the session ends.
 *
 * <p>A command with no GGML code of its own (a launcher: a script, chroot, a container runtime) is let out of
 * its gate at once, and the engine it starts is {@link #follow followed}: from then on {@link #pid()} is the
 * engine's, {@link #release()} resumes the engine (held stopped by a pidfd), and when the engine ends on its own
 * infertop waits for the command, whose exit status is still infertop's.
 */
public final class LaunchedCommand implements TracedProcess {
    private static final String PROGRAM = "launch-target";
    /** The variables of infertop's own environment the command gets (HOME, USER, LOGNAME are the user's). */
    public static final List<String> KEPT_VARIABLES = List.of("PATH", "TERM", "LANG");
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** The cgroup's task limit: far above what a llama.cpp server starts, far below a fork bomb. */
    static final long TASKS_MAX = 16384;
    private static final long RELAY_GRACE_MS = 1000;

    /** Where the command's output goes. */
    public enum Output {
        /** stdout to infertop's stdout, stderr to infertop's stderr, made printable */
        INHERIT,
        /** both to infertop's stderr, made printable, so infertop's own stdout (JSON) stays parseable */
        STDOUT_TO_STDERR,
        /** both to a log file, as written */
        LOG_FILE
    }

    /** A user to run the command as, and the setpriv that checks what that user can reach. */
    public record RunAs(UserAccount user, Path setpriv) {}

    private final Process process;
    private final TreeCgroup cgroup;
    private final List<Thread> relays;
    private final OutputStream log;
    private boolean released;
    /** The process of the tree that is traced when it is not the command itself (a launcher's engine). */
    private volatile Followed followed;
    /** Set when infertop stops the command (q, -n, a signal): then nothing waits for it to end on its own. */
    private volatile boolean stopAsked;
    /** While a followed engine runs: a JVM exit (a signal) stops the wait for the command after it. */
    private Thread stopOnExit;

    /** A descendant traced in the command's stead: held stopped until {@link #release()}. */
    private record Followed(ProcessHandle process, Pidfd pidfd) {}

    private LaunchedCommand(Process process, TreeCgroup cgroup, List<Thread> relays, OutputStream log) {
        this.process = process;
        this.cgroup = cgroup;
        this.relays = relays;
        this.log = log;
    }

    /**
     * The command's environment: PATH, TERM and LANG from infertop's ({@code own}; PATH a standard one when
     * unset), HOME, USER and LOGNAME of {@code user} (null: infertop's own), then {@code extra} (--env) over them.
     * Nothing else of root's (tokens, credentials caches, agent sockets) reaches the command.
     */
    public static Map<String, String> environment(Map<String, String> own, UserAccount user, Map<String, String> extra) {
        Map<String, String> environment = new LinkedHashMap<>();
        for (String name : KEPT_VARIABLES) {
            if (own.get(name) != null) {
                environment.put(name, own.get(name));
            }
        }
        environment.putIfAbsent("PATH", DEFAULT_PATH);
        if (user != null) {
            // What login(1) and sudo -u set: programs find their config and caches in the user's home, not root's.
            environment.put("HOME", user.home());
            environment.put("USER", user.name());
            environment.put("LOGNAME", user.name());
        } else {
            for (String name : List.of("HOME", "USER", "LOGNAME")) {
                if (own.get(name) != null) {
                    environment.put(name, own.get(name));
                }
            }
        }
        environment.putAll(extra);
        return environment;
    }

    /**
     * @param executable  the resolved executable (checked to exist beforehand)
     * @param environment the command's whole environment ({@link #environment})
     * @param logFile     with {@link Output#LOG_FILE}: the file the command's output is appended to (a
     *                    /proc/INFERTOP/fd/N name of the file infertop opened; infertop writes it, not the user)
     * @param runAs       the user to run the command as; null: infertop's own user
     */
    public static LaunchedCommand start(Path executable, List<String> arguments, Map<String, String> environment,
                                        Output output, Path logFile, RunAs runAs) throws IOException {
        Path directory = Files.createTempDirectory("infertop-gate-");
        List<String> argv = new ArrayList<>(List.of(NativeTool.extract(LaunchedCommand.class, PROGRAM, directory)
                .toString()));
        if (runAs != null) {
            UserAccount user = runAs.user();
            argv.addAll(List.of("-u", Integer.toUnsignedString(user.uid()), "-g", Integer.toUnsignedString(user.gid())));
            if (!user.groups().isEmpty()) {
                argv.addAll(List.of("-G", user.groups().stream().map(Integer::toUnsignedString)
                        .collect(Collectors.joining(","))));
            }
        }
        argv.add("--");
        argv.add(executable.toString());
        argv.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(argv); // stdin, stdout and stderr pipes: none is the terminal
        builder.environment().clear();
        builder.environment().putAll(environment);
        OutputStream logStream = output == Output.LOG_FILE
                ? Files.newOutputStream(logFile, StandardOpenOption.WRITE, StandardOpenOption.APPEND) : null;
        Process process;
        try {
            process = OwnPriority.start(builder);
        } catch (IOException e) {
            if (logStream != null) {
                logStream.close();
            }
            throw e;
        } finally {
            deleteQuietly(directory); // started (the JDK returns once the exec succeeded), or not at all
        }
        // Joined while it waits at the gate: everything the command will start is held from its first fork.
        TreeCgroup cgroup = TreeCgroup.create(ProcessHandle.current().pid(), "infertop-launch-" + process.pid(),
                TASKS_MAX, 0);
        cgroup.add(process.pid());
        OutputStream err = logStream != null ? logStream : new PrintableOutput(System.err);
        OutputStream out = output == Output.INHERIT ? new PrintableOutput(System.out) : err;
        List<Thread> relays = List.of(relay(process.getInputStream(), out, "stdout"),
                relay(process.getErrorStream(), err, "stderr"));
        return new LaunchedCommand(process, cgroup, relays, logStream);
    }

    private static Thread relay(InputStream from, OutputStream to, String which) {
        return Thread.ofPlatform().daemon().name("target-" + which).start(() -> {
            byte[] buffer = new byte[8192];
            try (from) {
                int n;
                while ((n = from.read(buffer)) > 0) {
                    synchronized (to) {
                        to.write(buffer, 0, n);
                        to.flush();
                    }
                }
            } catch (IOException e) {
                // the pipe closed, or the destination did: the command's output is no longer wanted
            }
        });
    }

    /**
     * The command's output on infertop's terminal: tabs, line ends and printable text pass; other control
     * characters (ESC and the rest of C0, DEL, and C1 as UTF-8) become '?', so no escape sequence the command
     * prints reaches root's terminal.
     */
    static final class PrintableOutput extends OutputStream {
        private final PrintStream to;
        private boolean afterC2;

        PrintableOutput(PrintStream to) {
            this.to = to;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            byte[] shown = new byte[length + 1];
            int n = 0;
            for (int i = offset; i < offset + length; i++) {
                int b = bytes[i] & 0xff;
                if (afterC2) {
                    afterC2 = false;
                    if (b >= 0x80 && b <= 0x9f) {
                        shown[n++] = '?';
                        continue;
                    }
                    shown[n++] = (byte) 0xc2;
                }
                if (b == 0xc2) {
                    afterC2 = true;
                } else if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f) {
                    shown[n++] = '?';
                } else {
                    shown[n++] = (byte) b;
                }
            }
            synchronized (to) {
                to.write(shown, 0, n);
            }
        }

        @Override
        public void flush() {
            to.flush();
        }
    }

    @Override
    public int pid() {
        Followed engine = followed;
        return engine == null ? (int) process.pid() : (int) engine.process().pid();
    }

    /** The pid of the command itself (the launcher, when a descendant is {@link #follow followed}). */
    public long launcherPid() {
        return process.pid();
    }

    @Override
    public boolean isAlive() {
        Followed engine = followed;
        return engine == null ? process.isAlive() : engine.process().isAlive();
    }

    /** Whether the command or anything it started (its cgroup holds) still runs. */
    public boolean treeRunning() {
        return process.isAlive() || cgroup.hasMembers();
    }

    /**
     * From now on the traced process is {@code pid}, a descendant of the command held stopped through
     * {@code pidfd}: {@link #release()} resumes it, and the command's own exit status is still infertop's.
     */
    public void follow(int pid, Pidfd pidfd) throws IOException {
        ProcessHandle handle = ProcessHandle.of(pid).orElseThrow(() -> new IOException("process " + pid
                + " exited before it was traced"));
        followed = new Followed(handle, pidfd);
        released = false;
        stopOnExit = new Thread(() -> stopAsked = true, "infertop-launcher-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
    }

    /** Whether a descendant is traced in the command's stead. */
    public boolean following() {
        return followed != null;
    }

    /** Lets the command out of its start gate before anything is traced (a launcher, followed to its engine). */
    public void openGate() throws IOException {
        release();
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
        Followed engine = followed;
        if (engine != null) {
            if (!engine.pidfd().signal(Pidfd.SIGCONT)) {
                throw new IOException("the followed process " + engine.process().pid() + " exited while held");
            }
            released = true;
            return;
        }
        try (OutputStream gate = process.getOutputStream()) {
            gate.write('\n');
        } catch (IOException e) {
            String status = process.isAlive() ? "" : " (its launcher exited with status " + process.exitValue() + ")";
            throw new IOException("the command did not wait at its start gate" + status);
        }
        released = true;
    }

    @Override
    public void beginStop() {
        Followed engine = followed;
        if (engine != null && !engine.process().isAlive() && !stopAsked) {
            return; // the engine ended on its own: the command finishes what it does after it (close() waits)
        }
        stopAsked = true;
        if (process.isAlive()) {
            process.destroy(); // SIGTERM now; close() waits for it
        }
    }

    /**
     * Stops the command if it still runs (SIGTERM, then SIGKILL after 3 s), kills whatever it started that is
     * still there (its cgroup, and its session where there is no cgroup), and writes the last of its output.
     */
    @Override
    public void close() {
        Followed engine = followed;
        if (engine != null) {
            engine.pidfd().close();
            if (!stopAsked && !engine.process().isAlive()) {
                awaitCommand(); // its engine is done: what the launcher does after it is its own
            }
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, or has run: nothing to remove
            }
        }
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
        cgroup.close();
        if (!cgroup.holdsTree()) {
            killSession(process.pid()); // a descendant that left the session is out of reach here
        }
        for (Thread relay : relays) {
            try {
                relay.join(RELAY_GRACE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (log != null) {
            try {
                log.close();
            } catch (IOException e) {
                // the log's last bytes are lost, nothing else
            }
        }
    }

    /** Waits for the command to exit on its own (a launcher after its engine: tearing down its container). */
    private void awaitCommand() {
        try {
            while (!stopAsked && !process.waitFor(200, TimeUnit.MILLISECONDS)) {
                // until it exits, or infertop is stopped (then it is stopped below)
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGKILL to every process of session {@code sid} (the launcher made one: its pid), until none is left. */
    static void killSession(long sid) {
        for (int round = 0; round < 50; round++) {
            List<ProcessHandle> members = ProcessHandle.allProcesses().filter(p -> sessionOf(p.pid()) == sid).toList();
            if (members.isEmpty()) {
                return;
            }
            members.forEach(ProcessHandle::destroyForcibly);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Field 6 of /proc/PID/stat (after the parenthesised name, which may hold spaces); -1 when unreadable. */
    static long sessionOf(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return fields[0].equals("Z") ? -1 : Long.parseLong(fields[3]); // state ppid pgrp session
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static void deleteQuietly(Path directory) {
        try (var entries = Files.list(directory)) {
            for (Path entry : entries.toList()) {
                Files.deleteIfExists(entry);
            }
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // a temp directory left behind is harmless
        }
    }
}
