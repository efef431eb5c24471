package dev.infertop.session;

import dev.infertop.bpf.BpfException;
import dev.infertop.ffi.LibC;
import dev.infertop.ffi.UserDatabase;
import dev.infertop.process.BackendVariants;
import dev.infertop.process.ProcessUids;
import dev.infertop.process.Setpriv;
import dev.infertop.io.TargetLog;
import dev.infertop.process.AttachedProcess;
import dev.infertop.model.SafeText;
import dev.infertop.process.GgmlCodeFinder;
import dev.infertop.process.ElfFile;
import dev.infertop.process.LaunchedCommand;
import dev.infertop.process.LibraryResolver;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.ResolvedLibraries;
import dev.infertop.process.TargetException;
import dev.infertop.process.TracedProcess;
import dev.infertop.workload.LlamaCppWorkload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The open stage: the process to trace (attached by pid, or the command launched and held at its gate) and the
 * files whose llama.cpp/ggml code the probes go on. Bad input ends here, with one line, before any probe.
 */
final class TargetOpener {
    /** The process and the candidate files (libraries, the executable, --lib) to probe. */
    record OpenedTarget(TracedProcess process, List<Path> candidates) {}

    private final RunControl control;
    /** The user infertop acts for (whose a -p process is). */
    private final InvokingUser invoking;
    /** Who runs the launched command (--user, sudo's caller, or infertop's user), and the setpriv for it. */
    private final LaunchedCommand.RunAs runAs;
    /** Said when the command starts (not before a failure: bad input stays one line). */
    private final String launchUserNote;

    /** Chooses the launch user at once: a bad --user, or no setpriv for it, ends the run before any probe. */
    TargetOpener(RunControl control, InvokingUser invoking) {
        this.control = control;
        this.invoking = invoking;
        LaunchUser choice = control.options.command().isEmpty() ? LaunchUser.SELF : LaunchUser.choose(
                control.options.user(), System.getenv(), UserDatabase.realUid(),
                LibC.geteuid(), LaunchUser.Directory.SYSTEM);
        if (choice.account().isEmpty()) {
            this.runAs = null;
            this.launchUserNote = null;
            return;
        }
        Path setpriv = Setpriv.find().orElseThrow(() -> new UserError("running the command as "
                + choice.account().get().name() + " needs setpriv (util-linux), which is not installed; "
                + "install it, or give --user root", 2));
        this.launchUserNote = choice.note();
        this.runAs = new LaunchedCommand.RunAs(choice.account().get(), setpriv);
    }

    /** The process of -p PID (or --follow's find), or the launched command, with its candidate files. */
    OpenedTarget open(Integer pid) {
        if (pid != null) {
            TracedProcess process = attach(pid);
            List<Path> candidates = librariesMappedBy(process.pid(), true);
            invoking.foreignProcessNote(pid, TracedProcess.commandName(pid), ProcessUids.of(pid))
                    .ifPresent(control::notice);
            return new OpenedTarget(process, candidates);
        }
        return launch();
    }

    private OpenedTarget launch() {
        TraceOptions options = control.options;
        // The command's own environment finds its executable (PATH) and libraries (LD_LIBRARY_PATH, --env).
        Map<String, String> environment = LaunchedCommand.environment(System.getenv(),
                runAs == null ? null : runAs.user(), options.environment());
        LibraryResolver resolver = new LibraryResolver(environment);
        Path executable;
        ResolvedLibraries resolved;
        try {
            executable = resolver.findExecutable(options.command().getFirst());
            if (!ElfFile.hasElfMagic(executable)) {
                return launchFollowing(executable, environment); // a script: its interpreter starts the engine
            }
            resolved = resolver.resolve(executable);
        } catch (TargetException e) {
            throw new UserError(e.getMessage());
        }
        List<Path> candidates = new ArrayList<>(resolved.inferenceLibraries());
        candidates.add(resolved.executable());
        candidates.addAll(options.extraLibraries());
        if (options.extraLibraries().isEmpty() && !hasInferenceCode(candidates)) {
            return launchFollowing(executable, environment); // sh -c, chroot, unshare, a container runtime
        }
        requireInferenceCode(candidates, "command " + options.command().getFirst());
        requireUsableByLaunchUser(executable, resolved.inferenceLibraries());
        LaunchedCommand command = startCommand(executable, environment);
        return new OpenedTarget(command, candidates);
    }

    /**
     * The command is a launcher (no GGML code of its own): started, let out of its gate at once, and followed
     * ({@link LaunchedTreeFollower}) to the first process of its tree that maps GGML code, which is traced from
     * before its first graph in the command's stead; the command's exit status is still infertop's. When the
     * tree ends without one, one line says so.
     */
    private OpenedTarget launchFollowing(Path executable, Map<String, String> environment) {
        TraceOptions options = control.options;
        requireUsableByLaunchUser(executable, List.of());
        for (Path library : options.extraLibraries()) {
            if (!Files.isRegularFile(library)) {
                throw new UserError("--lib " + library + ": no such file");
            }
        }
        LaunchedCommand command = startCommand(executable, environment);
        LaunchedTreeFollower.HeldEngine engine;
        long startedNs;
        LaunchedTreeFollower.HoldCost cost;
        String imagesRun;
        try (LaunchedTreeFollower follower = attachFollower(command, options.extraLibraries())) {
            command.openGate();
            startedNs = System.nanoTime();
            // Said once it starts something: a command that starts nothing ends in one line.
            String name = SafeText.of(options.command().getFirst());
            engine = follower.awaitEngine(command::treeRunning, () -> control.stopping(), () -> control.err.println(
                    "infertop: " + name + " has no GGML code of its own: following it to the first process it "
                            + "starts, or code it loads, that has")).orElse(null);
            cost = follower.cost();
            imagesRun = follower.imagesRun();
        } catch (IOException e) {
            command.close();
            throw new UserError("cannot start " + options.command().getFirst() + ": " + e.getMessage());
        }
        if (engine == null) {
            boolean stopped = control.stopping();
            command.close();
            if (stopped) {
                throw new UserError("stopped before the command started a process with GGML code", 130);
            }
            String status = command.exitStatus().map(s -> "exit status " + s).orElse("still running")
                    + (cost.unheld() > 0 ? "; " + cost.unheld() + " execs not looked at: the hold's ring was full" : "");
            throw new UserError(String.format(java.util.Locale.ROOT,
                    "the command ran %.1f s and started no process with GGML code (no llama.cpp/ggml library, "
                            + "libllama* or libggml*, and no llama_decode or ggml_graph_compute): %s (%s; stopped %d "
                            + "times at exec, %.1f ms in all)",
                    (System.nanoTime() - startedNs) / 1e9, imagesRun, status, cost.holds(), cost.heldNs() / 1e6), 1);
        }
        List<Path> candidates;
        try {
            command.follow(engine.pid(), engine.pidfd());
            candidates = librariesMappedBy(engine.pid(), true);
            // What it will dlopen (the CPU variant), probed before it runs: its first graph is counted too.
            candidates.addAll(BackendVariants.of(engine.pid(),
                    ProcessMaps.of(engine.pid()).mappedLibraries()));
        } catch (IOException | UserError e) {
            command.close();
            throw e instanceof UserError u ? u : new UserError(e.getMessage());
        }
        if (cost.unheld() > 0) {
            control.notice("infertop: " + cost.unheld() + " execs of the command's tree ran without being looked at "
                    + "(the hold's ring was full): an engine among them would not be followed");
        }
        if (engine.loadedLate() != null) {
            // Mapped while it ran (dlopen): nothing stopped it there, so its work before the attach is not seen.
            control.notice(String.format(java.util.Locale.ROOT, "infertop: following pid %d (%s), which loaded "
                            + "GGML code (%s) while it ran: traced from now, what it computed before is not seen; "
                            + "the hold stopped the tree %d times, %.1f ms in all", engine.pid(), engine.image(),
                    SafeText.of(engine.loadedLate()), cost.holds(), cost.heldNs() / 1e6));
        } else {
            control.notice(String.format(java.util.Locale.ROOT, "infertop: following pid %d (%s), started by the "
                            + "command, held at its entry point, before main; the hold stopped the tree %d times, "
                            + "%.1f ms in all", engine.pid(), engine.image(), cost.holds(), cost.heldNs() / 1e6));
        }
        return new OpenedTarget(command, candidates);
    }

    private static LaunchedTreeFollower attachFollower(LaunchedCommand command, List<Path> extraLibraries) {
        try {
            return LaunchedTreeFollower.attach((int) command.launcherPid(), extraLibraries);
        } catch (BpfException e) {
            command.close();
            throw new UserError("cannot follow the command to the process it starts: " + e.getMessage());
        }
    }

    /** The command started and held at its gate, its output routed as the output mode wants. */
    private LaunchedCommand startCommand(Path executable, Map<String, String> environment) {
        TraceOptions options = control.options;
        try {
            Path log = options.targetLog();
            if (log == null && options.output() == TraceOptions.OutputMode.LIVE) {
                // The screen is the live view's: the command's output goes to a log.
                Files.createDirectories(LlamaCppWorkload.cacheDir());
                log = LlamaCppWorkload.cacheDir().resolve("target.log");
                control.err.println("infertop: the command's output goes to " + log);
            }
            LaunchedCommand.Output route = log != null ? LaunchedCommand.Output.LOG_FILE
                    : options.output() == TraceOptions.OutputMode.JSON ? LaunchedCommand.Output.STDOUT_TO_STDERR
                    : LaunchedCommand.Output.INHERIT;
            if (launchUserNote != null) {
                control.err.println(launchUserNote);
            }
            // Opened here without following links; infertop appends the command's output through /proc/PID/fd/N.
            TargetLog targetLog = log == null ? null : TargetLog.open(log);
            control.keepTargetLog(targetLog);
            return LaunchedCommand.start(executable, options.command().subList(1,
                    options.command().size()), environment, route,
                    targetLog == null ? null : Path.of(targetLog.procPath()), runAs);
        } catch (IOException e) {
            throw new UserError("cannot start " + options.command().getFirst() + ": " + e.getMessage());
        }
    }

    /**
     * The launched command's user must be able to run its executable and read its llama.cpp libraries: checked
     * as that user before anything is attached, so a private directory (root's home is often 0700) is one line.
     */
    private void requireUsableByLaunchUser(Path executable, List<Path> libraries) {
        if (runAs == null) {
            return;
        }
        try {
            Optional<Path> unusable = Setpriv.firstUnusable(runAs.setpriv(),
                    runAs.user(), List.of(executable), libraries.stream().filter(Files::isRegularFile).toList());
            if (unusable.isPresent()) {
                throw new UserError(runAs.user().name() + " cannot " + (unusable.get().equals(executable)
                        ? "run " : "read ") + unusable.get() + " (a directory above it may be private, like /root): "
                        + "put it where " + runAs.user().name() + " can reach it, or give --user root", 2);
            }
        } catch (IOException e) {
            throw new UserError("cannot run the command as " + runAs.user().name() + ": " + e.getMessage(), 2);
        }
    }

    private static TracedProcess attach(int pid) {
        try {
            return AttachedProcess.of(pid);
        } catch (TargetException e) {
            throw new UserError(e.getMessage());
        }
    }

    /**
     * The process's ELF objects that hold llama.cpp/ggml code, whatever their names (the executable, a .so, a
     * Node addon's .node: {@link GgmlCodeFinder}), then --lib's. With {@code required}, none at all is one line
     * that names what was looked at.
     */
    private List<Path> librariesMappedBy(int pid, boolean required) {
        Set<Path> libraries = new LinkedHashSet<>();
        List<MemoryMapping> mapped;
        try {
            ProcessMaps maps = ProcessMaps.of(pid);
            if (maps.truncated()) {
                control.notice(maps.truncationNote());
            }
            mapped = maps.mappedLibraries();
        } catch (TargetException e) {
            throw new UserError(e.getMessage());
        }
        List<GgmlCodeFinder.Finding> lookedAt = new ArrayList<>();
        for (MemoryMapping mapping : mapped) {
            Path file = Path.of(mapping.path());
            if (libraries.contains(file)) {
                continue;
            }
            if (isNamedLikeInferenceLibrary(mapping.path())) {
                libraries.add(file); // by name, as before (a container's file may be readable only once probed)
                continue;
            }
            GgmlCodeFinder.Finding finding = GgmlCodeFinder.examine(file, mapping);
            lookedAt.add(finding);
            if (finding.holdsCode()) {
                libraries.add(file);
            }
        }
        boolean found = !libraries.isEmpty();
        libraries.addAll(control.options.extraLibraries());
        if (required) {
            requireInferenceCode(new ArrayList<>(libraries),
                    "process " + pid + " (" + TracedProcess.commandName(pid) + ")", found ? List.of() : lookedAt);
        }
        return new ArrayList<>(libraries);
    }

    /**
     * Whether a mapped file is one to probe: named like llama.cpp's libraries, or holding its code by what it
     * defines (an object of any name; read once per file, see GgmlCodeFinder). The session's rescans of the
     * maps ask this for each executable mapping, so a backend or an addon dlopen'ed later is found too.
     */
    static boolean isInferenceLibrary(String path) {
        return isNamedLikeInferenceLibrary(path) || GgmlCodeFinder.holdsCode(Path.of(path));
    }

    private static boolean isNamedLikeInferenceLibrary(String path) {
        Path name = Path.of(path).getFileName();
        return name != null && (name.toString().startsWith("libllama") || name.toString().startsWith("libggml")
                || name.toString().startsWith("libwhisper")); // whisper.cpp: its transcription call is the token layer's
    }

    /** Whether some candidate file is a llama.cpp/ggml library or defines a probed symbol. */
    private static boolean hasInferenceCode(List<Path> candidates) {
        for (Path candidate : candidates) {
            if (!Files.isRegularFile(candidate)) {
                continue;
            }
            if (isInferenceLibrary(candidate.toString())) {
                return true;
            }
            try (ElfFile elf = ElfFile.open(candidate)) {
                if (elf.function("llama_decode").isPresent() || elf.function("ggml_graph_compute").isPresent()) {
                    return true;
                }
            } catch (TargetException e) {
                // not one of this machine's ELF files
            }
        }
        return false;
    }

    /** Fails with one line unless some candidate file defines a probed symbol. */
    private void requireInferenceCode(List<Path> candidates, String what) {
        requireInferenceCode(candidates, what, List.of());
    }

    /**
     * Fails with one line unless some candidate file holds llama.cpp/ggml code; {@code lookedAt} (the process's
     * objects read and found without it) is named in that line. Drops from {@code candidates} the files read and
     * found to hold none (a launched command's executable, when it is an interpreter like node: probing a 100 MB
     * program that holds no probed function cost seconds per probe); --lib's stay, as the user's word.
     */
    private void requireInferenceCode(List<Path> candidates, String what, List<GgmlCodeFinder.Finding> lookedAt) {
        for (Path library : control.options.extraLibraries()) { // checked even when another candidate has the code
            if (!Files.isRegularFile(library)) {
                throw new UserError("--lib " + library + ": no such file");
            }
        }
        boolean holdsCode = false;
        for (java.util.Iterator<Path> each = candidates.iterator(); each.hasNext(); ) {
            Path candidate = each.next();
            boolean named = control.options.extraLibraries().contains(candidate);
            if (!Files.isRegularFile(candidate)) {
                if (named) {
                    throw new UserError("--lib " + candidate + ": no such file");
                }
                continue;
            }
            if (isNamedLikeInferenceLibrary(candidate.toString())) {
                holdsCode = true;
                continue;
            }
            GgmlCodeFinder.Finding finding = GgmlCodeFinder.examine(candidate, null);
            if (finding.failure() != null && named) {
                throw new UserError("--lib " + candidate + ": " + finding.failure());
            }
            holdsCode |= finding.holdsCode();
            if (!finding.holdsCode() && finding.failure() == null && !named) {
                each.remove();
            }
        }
        if (holdsCode) {
            return;
        }
        String seen = lookedAt.isEmpty() ? "" : " (looked at the " + lookedAt.size() + " ELF objects it maps: "
                + String.join(", ", lookedAt.stream().limit(MAX_NAMED).map(GgmlCodeFinder.Finding::summary).toList())
                + (lookedAt.size() > MAX_NAMED ? ", and " + (lookedAt.size() - MAX_NAMED) + " more" : "")
                + "; none defines a ggml_* or llama_* function)";
        for (GgmlCodeFinder.Finding finding : lookedAt) {
            if (finding.failure() == null && GgmlCodeFinder.holdsAnonymousGgml(finding.file())) {
                // Linked in with every symbol hidden: --lib would not help, the probes need names to start from.
                throw new UserError(what + ": " + SafeText.of(finding.file().toString()) + " holds ggml's code (its"
                        + " GGML_ASSERT strings) but names none of its functions (built with hidden symbols and"
                        + " stripped): nothing in it can be probed; a build that exports ggml_graph_compute (default"
                        + " visibility, or an unstripped .symtab) can be traced");
            }
        }
        throw new UserError(what + " uses no llama.cpp/ggml library or code" + seen
                + ": is it a llama.cpp program? Name the library with --lib PATH");
    }

    /** Objects named in the refusal at most: a process can map hundreds. */
    private static final int MAX_NAMED = 12;
}
