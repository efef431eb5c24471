package dev.infertop.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Proves nothing of infertop's is left in the kernel: no uprobe in {@code bpftool perf show} (where libbpf's
 * perf_event-based uprobes appear), none in tracefs uprobe_events, no infertop program in
 * {@code bpftool prog show}, nothing pinned under /sys/fs/bpf.
 */
final class LeakCheck {
    private LeakCheck() {}

    /** BPF program names are cut to 15 characters by the kernel. */
    private static final List<String> PROGRAM_PREFIXES = List.of("handle_decode_e", "handle_decode_x", "handle_graph_en",
            "handle_graph_ex", "handle_cpu_grap", "handle_");

    static void assertNothingLeft() throws IOException, InterruptedException {
        List<String> leaks = new ArrayList<>();
        // A closed perf fd is released asynchronously: give the kernel a moment.
        for (int attempt = 0; attempt < 20; attempt++) {
            leaks = findLeaks();
            if (leaks.isEmpty()) {
                return;
            }
            Thread.sleep(100);
        }
        assertEquals(List.of(), leaks, "infertop left things in the kernel" + holders(leaks));
    }

    /** Who holds the leaked probes: each holder's command line and parent, to tell which test started it. */
    private static String holders(List<String> leaks) {
        StringBuilder out = new StringBuilder();
        java.util.Set<String> seen = new java.util.TreeSet<>();
        for (String leak : leaks) {
            java.util.regex.Matcher pid = java.util.regex.Pattern.compile("pid (\\d+) ").matcher(leak);
            if (pid.find() && seen.add(pid.group(1))) {
                ProcessHandle.of(Long.parseLong(pid.group(1))).ifPresent(p -> out.append("\nholder ").append(p.pid())
                        .append(": ").append(p.info().commandLine().orElse("?")).append(" (parent ")
                        .append(p.parent().map(q -> q.pid() + " " + q.info().commandLine().orElse("?")).orElse("?"))
                        .append(")"));
            }
        }
        return out.toString();
    }

    static List<String> findLeaks() throws IOException, InterruptedException {
        List<String> leaks = new ArrayList<>();
        String perf = Processes.output(Requirements.bpftool().toString(), "perf", "show");
        perf.lines().filter(l -> l.contains("uprobe") || l.contains("uretprobe"))
                .forEach(l -> leaks.add("bpftool perf show: " + l.strip()));
        String programs = Processes.output(Requirements.bpftool().toString(), "prog", "show");
        programs.lines().filter(l -> PROGRAM_PREFIXES.stream().anyMatch(p -> l.contains("name " + p)))
                .forEach(l -> leaks.add("bpftool prog show: " + l.strip()));
        Path uprobeEvents = Path.of("/sys/kernel/tracing/uprobe_events");
        if (Files.isReadable(uprobeEvents)) {
            Files.readAllLines(uprobeEvents).stream().filter(l -> !l.isBlank())
                    .forEach(l -> leaks.add("uprobe_events: " + l));
        }
        Path pinned = Path.of("/sys/fs/bpf");
        if (Files.isDirectory(pinned)) {
            try (Stream<Path> entries = Files.list(pinned)) {
                entries.filter(p -> p.getFileName().toString().contains("infertop"))
                        .forEach(p -> leaks.add("pinned: " + p));
            }
        }
        return leaks;
    }
}
