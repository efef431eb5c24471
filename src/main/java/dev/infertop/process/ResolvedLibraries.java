package dev.infertop.process;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a not-yet-started executable will load: real paths (symlinks resolved), the form uprobes attach to.
 *
 * @param executable        the executable's real path
 * @param needed            every DT_NEEDED library, recursively, in ld.so's breadth-first load order
 * @param notFound          DT_NEEDED names found nowhere on the search path (ld.so would refuse to start)
 * @param dlopenCandidates  libggml-*.so files ggml may dlopen at run time (backend variants), not in needed
 */
public record ResolvedLibraries(Path executable, List<Path> needed, List<String> notFound,
                                List<Path> dlopenCandidates) {
    public ResolvedLibraries {
        needed = List.copyOf(needed);
        notFound = List.copyOf(notFound);
        dlopenCandidates = List.copyOf(dlopenCandidates);
    }

    /** The llama.cpp/ggml libraries among {@link #needed}, then every dlopen candidate: what to probe. */
    public List<Path> inferenceLibraries() {
        Set<Path> result = new LinkedHashSet<>();
        needed.stream().filter(ResolvedLibraries::isInferenceLibrary).forEach(result::add);
        result.addAll(dlopenCandidates);
        return List.copyOf(result);
    }

    static boolean isInferenceLibrary(Path library) {
        String name = library.getFileName().toString();
        return name.startsWith("libllama") || name.startsWith("libggml");
    }
}
