package dev.infertop.process;

import java.util.List;
import java.util.Optional;

/** The loader-relevant entries of the .dynamic section, search paths split on ':' and not yet expanded
 * ($ORIGIN, empty elements meaning the working directory). */
public record DynamicInfo(List<String> needed, Optional<String> soname, List<String> runpath, List<String> rpath) {
    public static final DynamicInfo NONE = new DynamicInfo(List.of(), Optional.empty(), List.of(), List.of());

    public DynamicInfo {
        needed = List.copyOf(needed);
        runpath = List.copyOf(runpath);
        rpath = List.copyOf(rpath);
    }

    public boolean hasRunpath() {
        return !runpath.isEmpty();
    }
}
