package dev.infertop.process;

import dev.infertop.ffi.OpenDirectory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The ggml backends a process that maps libggml may dlopen later (the CPU variant best for this machine, chosen
 * at its first use of ggml): libggml-*.so files beside its libggml, and in a {@code ggml/} directory beside it
 * (Debian keeps them in {@code /usr/lib/<multiarch>/ggml/backends0}). Probed before the process runs, their
 * first graph is counted as the rest are. Found in the process's own root: each directory is reached from
 * {@code /proc/PID/root} (or {@code /} for a library infertop reaches by its own path) one component at a time,
 * no symbolic link followed, and only regular files are named; a directory that cannot be reached that way is
 * left to the maps, which show a backend once it is loaded.
 */
public final class BackendVariants {
    private static final int MAX_VARIANTS = 64;

    private BackendVariants() {}

    /** Paths (as {@link ProcessMaps} names files of {@code pid}) of backends {@code mapped} does not hold yet. */
    public static List<Path> of(long pid, List<MemoryMapping> mapped) {
        Set<String> already = new LinkedHashSet<>();
        mapped.forEach(m -> already.add(m.path()));
        Set<Path> result = new LinkedHashSet<>();
        for (MemoryMapping mapping : mapped) {
            String name = Path.of(mapping.path()).getFileName().toString();
            if (!name.startsWith("libggml.") && !name.startsWith("libggml-base.")) {
                continue;
            }
            Optional<Machine> machine = ElfFile.peekMachine(Path.of(mapping.path()));
            if (machine.isEmpty()) {
                continue;
            }
            boolean inRoot = TargetRoot.isUnderProcessRoot(mapping.path());
            Path directory = Path.of(inRoot ? TargetRoot.targetPath(mapping.path()) : mapping.path()).getParent();
            if (directory == null) {
                continue;
            }
            List<Path> directories = new ArrayList<>(List.of(directory));
            try (OpenDirectory ggml = reach(pid, inRoot, directory.resolve("ggml"))) {
                for (String entry : ggml.list()) {
                    OpenDirectory.Stat stat = ggml.statEntry(entry);
                    if (stat != null && stat.isDirectory()) {
                        directories.add(directory.resolve("ggml").resolve(entry));
                    }
                }
            } catch (IOException | RuntimeException e) {
                // no ggml/ directory there, or one reached through a link: none of its backends named
            }
            for (Path candidateDirectory : directories) {
                try (OpenDirectory open = reach(pid, inRoot, candidateDirectory)) {
                    for (String entry : open.list()) {
                        if (!entry.startsWith("libggml-") || !entry.contains(".so") || result.size() >= MAX_VARIANTS) {
                            continue;
                        }
                        OpenDirectory.Stat stat = open.statEntry(entry);
                        String inProcess = candidateDirectory.resolve(entry).toString();
                        Path named = Path.of(inRoot ? TargetRoot.of(pid).hostPath(inProcess) : inProcess);
                        if (stat != null && stat.isRegularFile() && !already.contains(named.toString())
                                && ElfFile.peekMachine(named).equals(machine)) {
                            result.add(named);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // unreachable without a link: left to the maps
                }
            }
        }
        return List.copyOf(result);
    }

    /** {@code directory} (absolute, as the process sees it) opened from its root, no link followed on the way. */
    private static OpenDirectory reach(long pid, boolean inRoot, Path directory) throws IOException {
        if (!inRoot) {
            return OpenDirectory.open(directory);
        }
        OpenDirectory current = OpenDirectory.openFollowingLinks(TargetRoot.of(pid).directory());
        try {
            for (Path component : directory) {
                OpenDirectory next = current.openDirectory(component.toString());
                current.close();
                current = next;
            }
            return current;
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }
}
