package dev.infertop.process;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the libraries a command will load before it runs, so uprobes can be attached first: uprobes belong to
 * files, and take effect in the process when it maps them later.
 *
 * <p>DT_NEEDED is followed recursively and searched like ld.so does: DT_RPATH (of the needing object and its
 * loaders, only when the needing object has no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, then — instead of
 * /etc/ld.so.cache, whose format is not worth decoding here — the default directories. Candidates of another
 * architecture are skipped, as ld.so does. ggml may also dlopen backends at run time (the CPU variant best for
 * this CPU, BLAS, …): every {@code libggml-*.so} next to libggml/libggml-base or next to the executable is a
 * candidate, since that is where ggml's backend loader looks.
 */
public final class LibraryResolver {
    private final List<String> ldLibraryPath;
    private final List<String> executableSearchPath;
    private final Path workingDirectory;

    /** Resolution as a command started with {@code environment} would see it (LD_LIBRARY_PATH, PATH). */
    public LibraryResolver(Map<String, String> environment, Path workingDirectory) {
        this.ldLibraryPath = splitSearchPath(environment.getOrDefault("LD_LIBRARY_PATH", ""), "[:;]");
        this.executableSearchPath = splitSearchPath(environment.getOrDefault("PATH", ""), ":");
        this.workingDirectory = workingDirectory;
    }

    public LibraryResolver(Map<String, String> environment) {
        this(environment, Path.of("").toAbsolutePath());
    }

    /** Finds {@code command} the way execvp does: as a path when it has a slash, else along PATH. */
    public Path findExecutable(String command) throws TargetException {
        if (command.contains("/")) {
            Path path = workingDirectory.resolve(command);
            if (!Files.isRegularFile(path)) {
                throw new TargetException("no such file: " + command);
            }
            return path;
        }
        for (String dir : executableSearchPath) {
            Path candidate = workingDirectory.resolve(dir.isEmpty() ? "." : dir).resolve(command);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new TargetException("command not found on PATH: " + command);
    }

    /** Everything {@code executable} will load at start-up, plus the ggml backends it may dlopen. */
    public ResolvedLibraries resolve(Path executable) throws TargetException {
        Path realExecutable = realPath(executable);
        LoadedObject main;
        try (ElfFile elf = ElfFile.openHeaders(realExecutable)) {
            main = new LoadedObject(realExecutable, realExecutable, elf.dynamic(), null);
            Machine machine = elf.machine();
            List<LoadedObject> loaded = loadNeeded(main, machine);
            List<String> notFound = notFound(loaded, main, machine);
            List<Path> needed = loaded.stream().skip(1).map(LoadedObject::realPath).toList();
            return new ResolvedLibraries(realExecutable, needed, notFound,
                    dlopenCandidates(realExecutable, loaded, machine));
        }
    }

    /** Convenience for {@link ProcessMaps#mappedAmong}: which of {@code files} process {@code pid} has mapped. */
    public static List<Path> mappedBy(long pid, Collection<Path> files) throws TargetException {
        return ProcessMaps.of(pid).mappedAmong(files);
    }

    /** An object in the load order; {@code loader} is the object whose DT_NEEDED brought it in. */
    private record LoadedObject(Path foundAs, Path realPath, DynamicInfo dynamic, LoadedObject loader) {
        /** $ORIGIN: ld.so takes the executable's from /proc/self/exe (resolved), a library's from its found path. */
        Path origin() {
            return (loader == null ? realPath : foundAs).toAbsolutePath().getParent();
        }
    }

    private List<LoadedObject> loadNeeded(LoadedObject main, Machine machine) throws TargetException {
        List<LoadedObject> loaded = new ArrayList<>(List.of(main));
        Set<String> loadedNames = new HashSet<>();
        Set<Path> loadedFiles = new HashSet<>(Set.of(main.realPath()));
        main.dynamic().soname().ifPresent(loadedNames::add);
        Deque<LoadedObject> pending = new ArrayDeque<>(List.of(main));
        while (!pending.isEmpty()) {
            LoadedObject object = pending.removeFirst();
            for (String name : object.dynamic().needed()) {
                if (loadedNames.contains(name)) {
                    continue;
                }
                Optional<Path> found = search(name, object, main, machine);
                if (found.isEmpty()) {
                    continue;
                }
                loadedNames.add(name);
                Path real = realPath(found.get());
                if (!loadedFiles.add(real)) {
                    continue;
                }
                LoadedObject library;
                try (ElfFile elf = ElfFile.openHeaders(real)) {
                    library = new LoadedObject(found.get(), real, elf.dynamic(), object);
                }
                library.dynamic().soname().ifPresent(loadedNames::add);
                loaded.add(library);
                pending.addLast(library);
            }
        }
        return loaded;
    }

    private List<String> notFound(List<LoadedObject> loaded, LoadedObject main, Machine machine) {
        Set<String> missing = new TreeSet<>();
        for (LoadedObject object : loaded) {
            for (String name : object.dynamic().needed()) {
                if (search(name, object, main, machine).isEmpty()) {
                    missing.add(name);
                }
            }
        }
        return List.copyOf(missing);
    }

    private Optional<Path> search(String name, LoadedObject needing, LoadedObject main, Machine machine) {
        if (name.contains("/")) {
            Path path = workingDirectory.resolve(name);
            return ElfFile.peekMachine(path).filter(machine::equals).map(m -> path);
        }
        for (Path dir : searchDirectories(needing, main, machine)) {
            Path candidate = dir.resolve(name);
            if (Files.isRegularFile(candidate) && ElfFile.peekMachine(candidate).filter(machine::equals).isPresent()) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private List<Path> searchDirectories(LoadedObject needing, LoadedObject main, Machine machine) {
        Set<Path> dirs = new LinkedHashSet<>();
        if (!needing.dynamic().hasRunpath()) {
            for (LoadedObject object = needing; object != null; object = object.loader()) {
                expand(object.dynamic().rpath(), object, machine).forEach(dirs::add);
            }
            if (!main.dynamic().hasRunpath()) {
                expand(main.dynamic().rpath(), main, machine).forEach(dirs::add);
            }
        }
        for (String dir : ldLibraryPath) {
            dirs.add(workingDirectory.resolve(dir.isEmpty() ? "." : dir));
        }
        expand(needing.dynamic().runpath(), needing, machine).forEach(dirs::add);
        dirs.addAll(defaultDirectories(machine));
        return List.copyOf(dirs);
    }

    private List<Path> expand(List<String> searchPath, LoadedObject object, Machine machine) {
        List<Path> dirs = new ArrayList<>();
        for (String entry : searchPath) {
            String dir = entry
                    .replace("${ORIGIN}", object.origin().toString()).replace("$ORIGIN", object.origin().toString())
                    .replace("${LIB}", "lib/" + machine.debianMultiarch()).replace("$LIB", "lib/" + machine.debianMultiarch())
                    .replace("${PLATFORM}", platform(machine)).replace("$PLATFORM", platform(machine));
            dirs.add(workingDirectory.resolve(dir.isEmpty() ? "." : dir));
        }
        return dirs;
    }

    private static String platform(Machine machine) {
        return switch (machine) {
            case X86_64 -> "x86_64";
            case AARCH64 -> "aarch64";
        };
    }

    private static List<Path> defaultDirectories(Machine machine) {
        String multiarch = machine.debianMultiarch();
        return List.of(Path.of("/lib", multiarch), Path.of("/usr/lib", multiarch), Path.of("/lib"),
                Path.of("/usr/lib"), Path.of("/usr/local/lib"), Path.of("/lib64"), Path.of("/usr/lib64"));
    }

    private static List<Path> dlopenCandidates(Path executable, List<LoadedObject> loaded, Machine machine)
            throws TargetException {
        Set<Path> dirs = new LinkedHashSet<>();
        for (LoadedObject object : loaded) {
            String name = object.realPath().getFileName().toString();
            if (object.loader() != null && (name.startsWith("libggml.") || name.startsWith("libggml-base."))) {
                dirs.add(object.realPath().getParent());
                dirs.add(object.foundAs().toAbsolutePath().getParent());
            }
        }
        dirs.add(executable.getParent());
        Set<Path> alreadyLoaded = new HashSet<>();
        loaded.forEach(o -> alreadyLoaded.add(o.realPath()));
        Set<Path> candidates = new TreeSet<>();
        for (Path dir : dirs) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "libggml-*.so")) {
                for (Path file : files) {
                    Path real = realPath(file);
                    if (!alreadyLoaded.contains(real) && ElfFile.peekMachine(real).filter(machine::equals).isPresent()) {
                        candidates.add(real);
                    }
                }
            } catch (IOException e) {
                throw new TargetException("cannot list " + dir + ": " + e.getMessage(), e);
            }
        }
        return List.copyOf(candidates);
    }

    private static Path realPath(Path path) throws TargetException {
        try {
            return path.toRealPath();
        } catch (java.nio.file.NoSuchFileException e) {
            throw new TargetException("no such file: " + path);
        } catch (IOException e) {
            throw new TargetException("cannot resolve " + path + ": " + e.getMessage(), e);
        }
    }

    private static List<String> splitSearchPath(String joined, String separatorRegex) {
        return joined.isEmpty() ? List.of() : List.of(joined.split(separatorRegex, -1));
    }
}
