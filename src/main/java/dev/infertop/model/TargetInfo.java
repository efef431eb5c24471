package dev.infertop.model;

import java.util.List;

/** What is being traced: the process and what it maps. */
public record TargetInfo(int pid, String command, String modelFile, List<String> libraries) {
    public TargetInfo {
        libraries = List.copyOf(libraries);
    }
}
