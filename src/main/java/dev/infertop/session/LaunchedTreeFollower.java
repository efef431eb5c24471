package dev.infertop.session;

import dev.infertop.ffi.LibBpf;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.bpf.ProbeLink;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.bpf.TracepointLink;
import dev.infertop.bpf.UprobeLink;
import dev.infertop.ffi.Pidfd;
import dev.infertop.process.ElfFile;
import dev.infertop.process.GgmlCodeFinder;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.TargetException;
import dev.infertop.process.TracedProcess;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Follows a launched command that is a launcher (a script, {@code sh -c}, chroot, unshare, a container runtime)
 * to the first process it starts that runs GGML code, and hands that process over stopped before its first
 * instruction of main, so that the probes attached to it see every graph it computes.
 *
 * <p>native/follow.bpf.c stops each process of the launched tree at exec unless its new image is a known
 * launcher. Here: a static image is judged at once by its symbols; a dynamic one gets a uprobe (for that
 * process only) on its entry point and is resumed; its loader maps the DT_NEEDED closure in the process's own
 * root and namespaces, and the uprobe stops it again before the program's first instruction: its maps (read
 * as for -p, every path held to the mapped file) say whether it is an engine. One that is not is let go, and
 * its image (device and inode) becomes a known launcher: the next sed or grep of a script runs unstopped.
 * Every process is named by a pidfd opened for it and checked against the start time the kernel recorded at
 * its exec, so a pid reused meanwhile is never signalled.
 */
final class LaunchedTreeFollower implements AutoCloseable {
    private static final String OBJECT = "follow.bpf.o";
    private static final int HOLD_EXEC = 1;
    private static final int HOLD_ENTRY = 2;
    /** native/follow.bpf.c struct hold_event. */
    private static final int EVENT_BYTES = 32;
    private static final long RING_BYTES = 1 << 16;
    /** /proc/PID/stat's start time is in USER_HZ ticks (100 a second on every Linux architecture). */
    private static final long NS_PER_TICK = 10_000_000L;
    private static final int MAX_IMAGES_NAMED = 8;
    /** Names of the programs the tree ran kept for the last line: a tree may run any number of them. */
    private static final int MAX_NAMES_KEPT = 64;

    /**
     * A process of the launched tree with GGML code, stopped where it was found; resumed by its {@link #pidfd}.
     * {@code loadedLate}: null for one held at exec or its entry point; else the object it mapped while it ran
     * (a Node addon dlopen'ed by node), found by a watch of its maps: it was not stopped, and what it computed
     * before the probes attached is not seen.
     */
    record HeldEngine(int pid, Pidfd pidfd, String image, String loadedLate) {}

    /**
     * What the hold cost the launcher so far: each stop, from the kernel's record to the resume; {@code unheld}:
     * execs that ran on unstopped because the record of their stop found the ring full (never seen, so said).
     */
    record HoldCost(long holds, long heldNs, int images, long unheld) {}

    private record ImageKey(long dev, long ino) {}

    /** A dynamic image's process resumed with a uprobe on its entry point, until it reaches it. */
    private record AwaitingEntry(Pidfd pidfd, ImageKey image, ProbeLink entry, String name) {}

    /**
     * A process judged no engine and let go, watched for GGML code it maps later (node dlopen's an addon, Python
     * imports a wheel's library): its pidfd, its start time (a pid reused meanwhile is not read), and the files
     * already looked at.
     */
    private record Watched(Pidfd pidfd, long startTicks, String name, Set<String> seen) {}

    /** Processes watched at most: a tree may start any number, and each costs a maps read per watch. */
    static final int MAX_WATCHED = 32;
    /** How often the watched processes' maps are read: an addon is mapped well before its first graph. */
    static final long WATCH_EVERY_NS = 200_000_000L;
    private final Map<Integer, Watched> watched = new LinkedHashMap<>();
    private long nextWatchNs;

    private final BpfObject object;
    private final List<ProbeLink> links = new ArrayList<>();
    private final RingBufferReader ring;
    private final List<Path> extraLibraries;
    private final Set<ImageKey> launchers = new HashSet<>();
    private final Map<Integer, AwaitingEntry> awaitingEntry = new HashMap<>();
    private final Set<String> imagesRun = new LinkedHashSet<>();
    private HeldEngine found;
    private boolean closing;
    private final int launchedPid;
    /** Run once, when a process other than the command itself first execs. */
    private Runnable firstDescendant;
    private long holds;
    private long namesNotKept;
    private long heldNs;

    private LaunchedTreeFollower(int launchedPid, BpfObject object, RingBufferReader ring, List<Path> extraLibraries) {
        this.launchedPid = launchedPid;
        this.object = object;
        this.ring = ring;
        this.extraLibraries = extraLibraries;
    }

    /** Loads and attaches the exec hold for the tree of {@code launchedPid} (which waits at its start gate). */
    static LaunchedTreeFollower attach(int launchedPid, List<Path> extraLibraries) throws BpfException {
        BpfObject object = BpfObject.open("follow", objectBytes(), null);
        try {
            // SAFETY: follow.bpf.c's .rodata holds launched_tgid alone, a __u32 at offset 0.
            object.rodata().set(ValueLayout.JAVA_INT, 0, launchedPid);
            object.load();
            RingBufferReader ring = new RingBufferReader(object.mapFd("held"), RING_BYTES);
            LaunchedTreeFollower follower = new LaunchedTreeFollower(launchedPid, object, ring, extraLibraries);
            try {
                follower.links.add(TracepointLink.attach(object.program("handle_tree_fork"), "sched_process_fork"));
                follower.links.add(TracepointLink.attach(object.program("handle_tree_exit"), "sched_process_exit"));
                follower.links.add(TracepointLink.attach(object.program("handle_exec_hold"), "sched_process_exec"));
            } catch (BpfException e) {
                follower.close();
                throw e;
            }
            return follower;
        } catch (BpfException | RuntimeException e) {
            object.close();
            throw e;
        }
    }

    private static byte[] objectBytes() {
        String resource = "/dev/infertop/bpf/" + InfertopProbes.architecture() + "/" + OBJECT;
        try (InputStream in = LaunchedTreeFollower.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("this infertop build lacks " + resource + ": rebuild it with clang installed");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource + ": " + e.getMessage(), e);
        }
    }

    /**
     * Waits until a process of the tree is found to run GGML code (returned stopped), or {@code treeRunning}
     * says the tree has ended, or {@code stopping} says infertop stops (then empty).
     */
    Optional<HeldEngine> awaitEngine(BooleanSupplier treeRunning, BooleanSupplier stopping, Runnable firstDescendant) {
        this.firstDescendant = firstDescendant;
        while (found == null && !stopping.getAsBoolean()) {
            boolean running = treeRunning.getAsBoolean();
            ring.drain(this::onHold);
            if (found == null) {
                watchForLateCode();
            }
            if (found != null || (!running && awaitingEntry.isEmpty())) {
                break;
            }
            if (!running) {
                awaitingEntry.entrySet().removeIf(waiting -> {
                    if (alive(waiting.getKey())) {
                        return false;
                    }
                    waiting.getValue().entry().close(); // exited before its entry point: its uprobe goes
                    waiting.getValue().pidfd().close();
                    return true;
                });
            }
            ring.await(100);
        }
        return Optional.ofNullable(found);
    }

    private void onHold(MemorySegment data, long offset, int lengthBytes) {
        if (lengthBytes < EVENT_BYTES) {
            return;
        }
        int pid = data.get(ValueLayout.JAVA_INT_UNALIGNED, offset);
        int kind = data.get(ValueLayout.JAVA_INT_UNALIGNED, offset + 4);
        long startNs = data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8);
        ImageKey image = new ImageKey(data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 16),
                data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 24));
        long beganNs = System.nanoTime();
        holds++;
        if (pid != launchedPid && firstDescendant != null) {
            firstDescendant.run();
            firstDescendant = null;
        }
        Pidfd pidfd = openVerified(pid, startNs);
        if (pidfd == null) {
            return; // gone; its pid may name another process by now, which is left alone
        }
        if (found != null || closing) {
            resume(pidfd, beganNs); // one engine is followed: the rest of the tree runs on
            return;
        }
        if (kind == HOLD_EXEC) {
            onExec(pid, pidfd, image, beganNs);
        } else if (kind == HOLD_ENTRY) {
            onEntry(pid, pidfd, beganNs);
        } else {
            resume(pidfd, beganNs);
        }
    }

    private void onExec(int pid, Pidfd pidfd, ImageKey image, long beganNs) {
        Watched before = watched.remove(pid);
        if (before != null) {
            // Its old image was watched; the new one is judged by the hold. Left watched, its loader's maps could
            // be taken for code mapped late before the hold at its entry point stops it, and it would run on.
            before.pidfd().close();
        }
        String name = TracedProcess.commandName(pid);
        if (imagesRun.size() < MAX_NAMES_KEPT) {
            imagesRun.add(name);
        } else if (!imagesRun.contains(name)) {
            namesNotKept++;
        }
        if (launchers.contains(image)) {
            resume(pidfd, beganNs); // judged while this one was on its way
            return;
        }
        Path exe = Path.of("/proc", Integer.toString(pid), "exe"); // the very file it runs, whatever names it
        boolean dynamic;
        long entryOffset;
        try (ElfFile elf = ElfFile.openHeaders(exe)) { // its symbols only if it turns out to map no GGML library
            dynamic = elf.hasInterpreter();
            entryOffset = dynamic ? elf.fileOffsetOf(elf.entryPoint()) : -1;
        } catch (TargetException e) {
            markLauncher(image); // not an ELF64 file of this machine (binfmt_misc): not an engine infertop probes
            resume(pidfd, beganNs);
            return;
        }
        if (!dynamic) {
            judge(pid, pidfd, image, name, beganNs); // static: all its code is mapped already
            return;
        }
        try {
            ProbeLink entry = UprobeLink.attach(object.program("handle_entry_hold"), pid, exe, entryOffset, false);
            awaitingEntry.put(pid, new AwaitingEntry(pidfd, image, entry, name));
        } catch (BpfException e) {
            judge(pid, pidfd, image, name, beganNs); // no hold at its entry: judged by its image alone
            return;
        }
        heldNs += System.nanoTime() - beganNs;
        pidfd.signal(Pidfd.SIGCONT); // on to its entry point, where the uprobe stops it again
    }

    private void onEntry(int pid, Pidfd pidfd, long beganNs) {
        AwaitingEntry waiting = awaitingEntry.remove(pid);
        if (waiting == null) {
            resume(pidfd, beganNs);
            return;
        }
        waiting.entry().close();
        waiting.pidfd().close();
        judge(pid, pidfd, waiting.image(), waiting.name(), beganNs);
    }

    /** An engine if it maps GGML code now (its loader's work done); else its image is a launcher, and it runs on. */
    private void judge(int pid, Pidfd pidfd, ImageKey image, String name, long beganNs) {
        if (mapsGgmlCode(pid) || exportsGgml(pid)) {
            engine(pid, pidfd, name, beganNs);
            return;
        }
        markLauncher(image);
        resumeWatched(pid, pidfd, name, beganNs);
    }

    /** Lets a process judged no engine go on, and watches it for GGML code it maps later (while room is left). */
    private void resumeWatched(int pid, Pidfd pidfd, String name, long beganNs) {
        Set<String> seen = new HashSet<>();
        long started;
        try {
            started = startTicks(pid);
            for (MemoryMapping mapping : ProcessMaps.of(pid).mappedLibraries()) {
                seen.add(fileKey(mapping)); // judged just now: nothing of it holds GGML code
            }
        } catch (IOException e) { // TargetException too
            resume(pidfd, beganNs);
            return;
        }
        pidfd.signal(Pidfd.SIGCONT);
        heldNs += System.nanoTime() - beganNs;
        if (watched.size() >= MAX_WATCHED || found != null) {
            pidfd.close();
            return;
        }
        watched.put(pid, new Watched(pidfd, started, name, seen)); // not watched before: onExec dropped that
    }

    /**
     * Reads the watched processes' maps (every {@link #WATCH_EVERY_NS}): the first that maps a file holding GGML
     * code (by what it defines, as for -p, or a --lib file) is the engine, running; a process gone is dropped.
     */
    private void watchForLateCode() {
        long now = System.nanoTime();
        if (watched.isEmpty() || now < nextWatchNs) {
            return;
        }
        nextWatchNs = now + WATCH_EVERY_NS;
        for (java.util.Iterator<Map.Entry<Integer, Watched>> it = watched.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Integer, Watched> entry = it.next();
            int pid = entry.getKey();
            Watched watch = entry.getValue();
            List<MemoryMapping> mappings;
            try {
                if (startTicks(pid) != watch.startTicks()) {
                    throw new IOException("another process");
                }
                mappings = ProcessMaps.of(pid).mappedLibraries();
            } catch (IOException e) { // TargetException too
                watch.pidfd().close(); // gone (its pid may name another process by now)
                it.remove();
                continue;
            }
            for (MemoryMapping mapping : mappings) {
                if (!mapping.isExecutable() || !watch.seen().add(fileKey(mapping))) {
                    continue;
                }
                Path file = Path.of(mapping.path());
                boolean extra = extraLibraries.stream().anyMatch(library -> sameFile(library, mapping));
                if (extra || GgmlCodeFinder.examine(file, mapping).holdsCode()) {
                    it.remove();
                    Path name = file.getFileName();
                    found = new HeldEngine(pid, watch.pidfd(), watch.name(), name == null ? file.toString()
                            : name.toString());
                    return;
                }
            }
        }
    }

    private static String fileKey(MemoryMapping mapping) {
        return mapping.device() + ":" + mapping.inode();
    }

    /** Whether the executable itself defines a probed function (llama.cpp linked in statically). */
    private static boolean exportsGgml(int pid) {
        try (ElfFile elf = ElfFile.open(Path.of("/proc", Integer.toString(pid), "exe"))) {
            return elf.function("llama_decode").isPresent() || elf.function("ggml_graph_compute").isPresent();
        } catch (TargetException e) {
            return false;
        }
    }

    /** Whether {@code pid}'s maps show a libllama*, libggml* or --lib file mapped executable. */
    private boolean mapsGgmlCode(int pid) {
        try {
            for (MemoryMapping mapping : ProcessMaps.of(pid).mappedLibraries()) {
                if (TargetOpener.isInferenceLibrary(mapping.path())) {
                    return true;
                }
                for (Path library : extraLibraries) {
                    if (sameFile(library, mapping)) {
                        return true;
                    }
                }
            }
        } catch (TargetException e) {
            return false; // gone
        }
        return false;
    }

    private static boolean sameFile(Path library, MemoryMapping mapping) {
        try {
            Object key = Files.readAttributes(library, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
            Object mapped = Files.readAttributes(Path.of(mapping.path()),
                    java.nio.file.attribute.BasicFileAttributes.class).fileKey();
            return key != null && key.equals(mapped);
        } catch (IOException e) {
            return false;
        }
    }

    private void engine(int pid, Pidfd pidfd, String name, long beganNs) {
        heldNs += System.nanoTime() - beganNs;
        found = new HeldEngine(pid, pidfd, name, null);
    }

    private void markLauncher(ImageKey image) {
        if (!launchers.add(image)) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocate(16, 8);
            key.set(ValueLayout.JAVA_LONG, 0, image.dev());
            key.set(ValueLayout.JAVA_LONG, 8, image.ino());
            object.updateElement("launchers", key, arena.allocate(1));
        } catch (BpfException e) {
            // the map is full: that image is stopped and judged again at each exec, nothing worse
        }
    }

    private void resume(Pidfd pidfd, long beganNs) {
        pidfd.signal(Pidfd.SIGCONT);
        pidfd.close();
        heldNs += System.nanoTime() - beganNs;
    }

    /** A pidfd of {@code pid} if it is still the process that started at {@code startNs} (boot clock); else null. */
    private static Pidfd openVerified(int pid, long startNs) {
        Pidfd pidfd;
        try {
            pidfd = Pidfd.open(pid);
        } catch (IOException e) {
            return null;
        }
        try {
            if (startTicks(pid) == startNs / NS_PER_TICK) {
                return pidfd; // the descriptor was opened first: if the start time matches, it names that process
            }
        } catch (IOException e) {
            // gone
        }
        pidfd.close();
        return null;
    }

    /** Field 22 of /proc/PID/stat (after the parenthesised name, which may hold spaces and parentheses). */
    private static long startTicks(int pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
        String[] fields = stat.substring(stat.lastIndexOf(')') + 1).strip().split(" ");
        try {
            return Long.parseLong(fields[22 - 3]);
        } catch (RuntimeException e) {
            throw new IOException("cannot read the start time in /proc/" + pid + "/stat");
        }
    }

    private static boolean alive(int pid) {
        return Files.exists(Path.of("/proc", Integer.toString(pid)));
    }

    /** What the hold has cost so far. */
    HoldCost cost() {
        return new HoldCost(holds, heldNs, launchers.size(), unheld());
    }

    private long unheld() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) LibBpf.bpf_map_lookup_elem$handle().invokeExact(object.mapFd("unheld"),
                    key, value);
            return rc == 0 ? value.get(ValueLayout.JAVA_LONG, 0) : 0;
        } catch (BpfException e) {
            return 0;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The programs the tree ran (their comm), for the line that says none was an engine. */
    String imagesRun() {
        List<String> names = new ArrayList<>(imagesRun);
        String shown = String.join(", ", names.subList(0, Math.min(names.size(), MAX_IMAGES_NAMED)));
        long more = Math.max(0, names.size() - MAX_IMAGES_NAMED) + namesNotKept;
        return names.isEmpty() ? "it ran no program" : "it ran " + shown + (more > 0 ? " and " + more + " more" : "");
    }

    /**
     * Detaches the hold, then resumes every process it still holds (records not read yet, processes on their way
     * to an entry point run on without a uprobe), except the engine handed over.
     */
    @Override
    public void close() {
        for (ProbeLink link : links) {
            link.close();
        }
        for (AwaitingEntry waiting : awaitingEntry.values()) {
            waiting.entry().close();
            waiting.pidfd().close();
        }
        awaitingEntry.clear();
        for (Watched watch : watched.values()) {
            watch.pidfd().close(); // running: only the descriptors go
        }
        watched.clear();
        closing = true; // records read from here on are all resumed
        ring.drain(this::onHold);
        ring.close();
        object.close();
    }
}
