package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Proves nothing of this test's infertop is left in the kernel: no uprobe in {@code bpftool perf show} (where
 * libbpf's perf_event-based uprobes appear), no uprobe-multi link ({@link UprobeMultiLinks}), none of libbpf's legacy tracefs uprobes in uprobe_events, no infertop
 * program in {@code bpftool prog show}, nothing pinned under /sys/fs/bpf.
 *
 * <p>The kernel's lists are machine-wide, and another infertop may be running on the machine (a user's, another
 * suite's): a probe or program whose every holder is a live infertop outside this JVM's process tree is that
 * one's, not a leak. Anything else counts: a holder of ours, a target or child that inherited a descriptor (it
 * may have been reparented away from us), or nothing holding it at all (pinned).
 */
final class LeakCheck {
    private LeakCheck() {}

    private static final ObjectMapper JSON = new ObjectMapper();

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
        Set<String> seen = new TreeSet<>();
        for (String leak : leaks) {
            java.util.regex.Matcher pid = java.util.regex.Pattern.compile("pid (\\d+)").matcher(leak);
            while (pid.find()) {
                if (seen.add(pid.group(1))) {
                    ProcessHandle.of(Long.parseLong(pid.group(1))).ifPresent(p -> out.append("\nholder ").append(p.pid())
                            .append(": ").append(p.info().commandLine().orElse("?")).append(" (parent ")
                            .append(p.parent().map(q -> q.pid() + " " + q.info().commandLine().orElse("?")).orElse("?"))
                            .append(")"));
                }
            }
        }
        return out.toString();
    }

    static List<String> findLeaks() throws IOException, InterruptedException {
        Set<Long> ours = ProcessHandle.current().descendants().map(ProcessHandle::pid).collect(Collectors.toSet());
        List<String> leaks = new ArrayList<>();
        for (JsonNode probe : bpftoolJson("perf", "show")) {
            String kind = probe.path("fd_type").asText();
            if (!kind.contains("uprobe")) {
                continue;
            }
            long holder = probe.path("pid").asLong(-1);
            if (!isAnotherInfertop(holder, ours)) {
                leaks.add("bpftool perf show: pid " + holder + " fd " + probe.path("fd").asText() + " " + kind + " "
                        + probe.path("filename").asText() + " offset " + probe.path("offset").asText());
            }
        }
        // Where infertop attaches uprobes as uprobe-multi links they are in no perf show: each link is a leak
        // unless every holder is another live infertop (no holder: pinned, or held by nothing that can close it).
        for (UprobeMultiLinks.Link link : UprobeMultiLinks.all()) {
            if (link.holders().isEmpty() || !link.holders().stream().allMatch(h -> isAnotherInfertop(h, ours))) {
                leaks.add("uprobe-multi link " + link.id() + " (prog_id " + link.programId() + ", "
                        + (link.retprobe() ? "uretprobes" : "uprobes") + " " + link.path() + " at "
                        + link.fileOffsets().size() + " offsets) held by " + (link.holders().isEmpty() ? "nothing"
                        : link.holders().stream().map(h -> "pid " + h).collect(Collectors.joining(", "))));
            }
        }
        Map<Long, List<Long>> programHolders = programHolders();
        for (JsonNode program : bpftoolJson("prog", "show")) {
            String name = program.path("name").asText();
            if (PROGRAM_PREFIXES.stream().noneMatch(name::startsWith)) {
                continue;
            }
            List<Long> holders = programHolders.getOrDefault(program.path("id").asLong(), List.of());
            if (holders.isEmpty() || !holders.stream().allMatch(h -> isAnotherInfertop(h, ours))) {
                leaks.add("bpftool prog show: id " + program.path("id").asText() + " name " + name + " held by "
                        + (holders.isEmpty() ? "nothing (pinned or a link)"
                        : holders.stream().map(h -> "pid " + h).collect(Collectors.joining(", "))));
            }
        }
        // libbpf falls back to tracefs for uprobes where the kernel has no uprobe PMU, naming them libbpf_<pid>_...;
        // other entries there are tests' own tracefs oracles (Tracefs), which clean up after themselves.
        Path uprobeEvents = Path.of("/sys/kernel/tracing/uprobe_events");
        if (Files.isReadable(uprobeEvents)) {
            for (String line : Files.readAllLines(uprobeEvents)) {
                java.util.regex.Matcher legacy = java.util.regex.Pattern.compile("libbpf_(\\d+)_").matcher(line);
                if (legacy.find() && !isAnotherInfertop(Long.parseLong(legacy.group(1)), ours)) {
                    leaks.add("uprobe_events: " + line);
                }
            }
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

    /**
     * Which processes hold each BPF program: a descriptor of the program, or of a link to it, says
     * {@code prog_id} in its fdinfo (a bpftool built without its skeletons prints no {@code pids}).
     */
    private static Map<Long, List<Long>> programHolders() {
        return fdinfoHolders("prog_id:");
    }

    /**
     * Which processes hold a descriptor whose fdinfo has {@code key} (e.g. {@code prog_id:}, {@code link_id:}),
     * by its value.
     */
    static Map<Long, List<Long>> fdinfoHolders(String key) {
        Map<Long, List<Long>> holders = new HashMap<>();
        File[] processes = new File("/proc").listFiles((dir, name) -> name.chars().allMatch(Character::isDigit));
        for (File process : processes == null ? new File[0] : processes) {
            File[] descriptors = new File(process, "fdinfo").listFiles();
            if (descriptors == null) {
                continue; // gone, or a kernel thread
            }
            long pid = Long.parseLong(process.getName());
            for (File descriptor : descriptors) {
                try {
                    for (String line : Files.readAllLines(descriptor.toPath())) {
                        if (line.startsWith(key)) {
                            long id = Long.parseLong(line.substring(key.length()).strip());
                            List<Long> of = holders.computeIfAbsent(id, k -> new ArrayList<>());
                            if (!of.contains(pid)) {
                                of.add(pid);
                            }
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // closed or the process ended while read: it holds nothing now
                }
            }
        }
        return holders;
    }

    /** A live infertop that this JVM did not start (directly or through the processes it started). */
    private static boolean isAnotherInfertop(long pid, Set<Long> ours) {
        if (pid <= 0 || ours.contains(pid)) {
            return false;
        }
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .flatMap(p -> p.info().commandLine())
                .map(line -> line.contains("infertop.jar") || line.contains("dev.infertop.cli.Main"))
                .orElse(false);
    }

    private static JsonNode bpftoolJson(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Requirements.bpftool().toString(), "-j"));
        command.addAll(List.of(arguments));
        // stdout alone: a warning bpftool prints on stderr is not JSON
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String printed = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        process.waitFor();
        return printed.isEmpty() ? JSON.createArrayNode() : JSON.readTree(printed);
    }
}
