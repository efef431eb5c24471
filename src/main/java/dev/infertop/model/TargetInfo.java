package dev.infertop.model;

import java.util.List;

/** What is being traced: the process and what it maps. */
public record TargetInfo(int pid, String command, String modelFile, List<String> libraries) {
    /** Every name made visible here ({@link SafeText}): the target chose them, or a snapshot file did. */
    public TargetInfo {
        command = SafeText.of(command);
        modelFile = SafeText.of(modelFile);
        libraries = libraries.stream().map(SafeText::of).toList();
    }
}
