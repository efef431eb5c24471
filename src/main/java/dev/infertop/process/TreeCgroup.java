package dev.infertop.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A transient cgroup that holds a process infertop starts and everything it starts in turn: killed as one at the
 * end (no descendant outlives it, whatever it did to leave its session or parent), and optionally under a pids
 * and a memory limit. It is made beside the process it is for: a child of the cgroup of {@code parent} (a target,
 * or infertop itself), so whatever limits that cgroup is under apply to it too.
 *
 * <p>Where the hierarchies are: cgroup v2 at /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (a hybrid
 * system, v2 without controllers beside the v1 ones); v1 controllers at /sys/fs/cgroup/CONTROLLER. Used: the v2
 * group for the kill ({@code cgroup.kill}, Linux 5.14; before it, {@code cgroup.freeze} and a SIGKILL to each
 * member) and, where its parent delegates them, its {@code pids.max} and {@code memory.max}; else the v1
 * {@code freezer} (frozen, each member killed, thawed) and v1 {@code pids} and {@code memory} groups for the
 * limits. A hierarchy that is missing or not writable (a container's read-only /sys/fs/cgroup) is skipped, and
 * {@link #description()} says what was had.
 */
public final class TreeCgroup implements AutoCloseable {
    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final int KILL_ROUNDS = 100;

    private record Group(Path directory, String kind) {}

    private final List<Group> groups;
    private final Group killer;

    private TreeCgroup(List<Group> groups, Group killer) {
        this.groups = groups;
        this.killer = killer;
    }

    /**
     * Makes {@code name} under {@code parent}'s cgroups (empty when no hierarchy could be used);
     * {@code pidsMax}/{@code memoryMaxBytes} 0 for no limit of that kind.
     */
    public static TreeCgroup create(long parent, String name, long pidsMax, long memoryMaxBytes) {
        List<Group> made = new ArrayList<>();
        Group killer = null;
        boolean pidsLimited = pidsMax == 0;
        boolean memoryLimited = memoryMaxBytes == 0;
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/" + parent + "/cgroup"));
        } catch (IOException e) {
            return new TreeCgroup(List.of(), null);
        }
        Optional<Path> unified = unifiedRoot();
        for (String line : lines) {
            String[] fields = line.split(":", 3);
            if (fields.length == 3 && fields[0].equals("0") && fields[1].isEmpty() && unified.isPresent()) {
                Optional<Path> group = make(unified.get(), fields[2], name);
                if (group.isPresent()) {
                    Group v2 = new Group(group.get(), "v2");
                    made.add(v2);
                    killer = v2;
                    pidsLimited |= pidsMax > 0 && write(group.get().resolve("pids.max"), Long.toString(pidsMax));
                    memoryLimited |= memoryMaxBytes > 0
                            && write(group.get().resolve("memory.max"), Long.toString(memoryMaxBytes));
                }
            }
        }
        for (String line : lines) {
            String[] fields = line.split(":", 3);
            if (fields.length != 3 || fields[1].isEmpty()) {
                continue;
            }
            List<String> controllers = List.of(fields[1].split(","));
            boolean freezer = killer == null && controllers.contains("freezer");
            boolean pids = !pidsLimited && controllers.contains("pids");
            boolean memory = !memoryLimited && controllers.contains("memory");
            if (!freezer && !pids && !memory) {
                continue;
            }
            Optional<Path> group = make(ROOT.resolve(fields[1]), fields[2], name);
            if (group.isEmpty()) {
                continue;
            }
            Group v1 = new Group(group.get(), "v1 " + fields[1]);
            made.add(v1);
            if (freezer) {
                killer = v1;
            }
            if (pids) {
                pidsLimited = write(group.get().resolve("pids.max"), Long.toString(pidsMax));
            }
            if (memory) {
                memoryLimited = write(group.get().resolve("memory.limit_in_bytes"), Long.toString(memoryMaxBytes));
            }
        }
        return new TreeCgroup(List.copyOf(made), killer);
    }

    private static Optional<Path> unifiedRoot() {
        if (Files.isRegularFile(ROOT.resolve("cgroup.controllers"))) {
            return Optional.of(ROOT);
        }
        Path hybrid = ROOT.resolve("unified");
        return Files.isRegularFile(hybrid.resolve("cgroup.procs")) ? Optional.of(hybrid) : Optional.empty();
    }

    /** mount/relative/name, made fresh (an existing one of that name is not ours); empty when it cannot be. */
    private static Optional<Path> make(Path mount, String relative, String name) {
        if (!Files.isDirectory(mount) || relative.contains("..") || !relative.startsWith("/")) {
            return Optional.empty();
        }
        Path parent = mount.resolve(relative.substring(1)).normalize();
        if (!parent.startsWith(mount) || !Files.isDirectory(parent)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Files.createDirectory(parent.resolve(name)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static boolean write(Path file, String value) {
        try {
            Files.writeString(file, value, StandardCharsets.US_ASCII);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The cgroup.procs files to put a process into, each hierarchy's. */
    public List<Path> procsFiles() {
        return groups.stream().map(g -> g.directory().resolve("cgroup.procs")).toList();
    }

    /** Whether everything a member starts is held, so {@link #close()} ends it all. */
    public boolean holdsTree() {
        return killer != null;
    }

    /** Adds {@code pid} (and what it starts from now on) to every hierarchy's group; false if any refused. */
    public boolean add(long pid) {
        boolean all = true;
        for (Path procs : procsFiles()) {
            all &= write(procs, Long.toString(pid));
        }
        return all;
    }

    /** Whether some process is still in the group that kills the tree (false where there is none). */
    public boolean hasMembers() {
        return killer != null && !members(killer.directory()).isEmpty();
    }

    /** For notes: "cgroup v2 /sys/fs/cgroup/unified/...; v1 pids, memory" or "no cgroup". */
    public String description() {
        return groups.isEmpty() ? "no cgroup" : "cgroup " + String.join(", ", groups.stream().map(Group::kind).toList());
    }

    /** Kills every member (until none is left) and removes the groups. */
    @Override
    public void close() {
        if (killer != null) {
            killAll(killer);
        }
        for (Group group : groups) {
            for (int i = 0; i < KILL_ROUNDS; i++) {
                try {
                    Files.deleteIfExists(group.directory());
                    break;
                } catch (IOException e) {
                    // members still exiting (a zombie not yet reaped by its parent): again shortly
                    sleepQuietly();
                }
            }
        }
    }

    private static void killAll(Group group) {
        Path directory = group.directory();
        boolean v2 = group.kind().equals("v2");
        for (int round = 0; round < KILL_ROUNDS && !members(directory).isEmpty(); round++) {
            if (v2 && write(directory.resolve("cgroup.kill"), "1")) {
                sleepQuietly();
                continue;
            }
            // Frozen, a member can neither fork nor exit: the pids read are the ones killed.
            boolean frozen = v2 ? write(directory.resolve("cgroup.freeze"), "1")
                    : write(directory.resolve("freezer.state"), "FROZEN");
            for (long pid : members(directory)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            if (frozen) {
                write(v2 ? directory.resolve("cgroup.freeze") : directory.resolve("freezer.state"), v2 ? "0" : "THAWED");
            }
            sleepQuietly();
        }
    }

    private static List<Long> members(Path directory) {
        try {
            return Files.readAllLines(directory.resolve("cgroup.procs")).stream().filter(l -> !l.isBlank())
                    .map(l -> Long.parseLong(l.strip())).toList();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
