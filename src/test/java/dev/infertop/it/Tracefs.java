package dev.infertop.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An oracle independent of infertop: tracefs uprobes (created through uprobe_events, not BPF) in one event
 * group, whose hit counts the kernel reports in uprobe_profile. A uprobe belongs to a file (inode): it counts
 * every process that runs the probed code, so tests probe copies of the libraries nobody else runs.
 * {@link #close()} disables and removes exactly the probes this group created, and checks they are gone.
 */
final class Tracefs implements AutoCloseable {
    static final Path TRACING = Path.of("/sys/kernel/tracing");
    private static final Path UPROBE_EVENTS = TRACING.resolve("uprobe_events");

    private final String group;
    private final List<String> created = new ArrayList<>();

    private Tracefs(String group) {
        this.group = group;
    }

    /** Mounts tracefs if needed (skips or, in CI, fails without it). */
    static void require() throws IOException, InterruptedException {
        if (Files.exists(UPROBE_EVENTS)) {
            return;
        }
        Process mount = new ProcessBuilder("mount", "-t", "tracefs", "nodev", TRACING.toString())
                .redirectErrorStream(true).start();
        String output = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Requirements.require(mount.waitFor() == 0 && Files.exists(UPROBE_EVENTS),
                "needs tracefs at " + TRACING + ": " + output.strip());
    }

    /** A group with nothing in it: probes a crashed earlier run left under the same name are removed first. */
    static Tracefs group(String group) throws IOException {
        Tracefs tracefs = new Tracefs(group);
        tracefs.removeStale();
        return tracefs;
    }

    /** An entry probe {@code group/event} at {@code fileOffset} of {@code library}. */
    void addProbe(String event, Path library, long fileOffset) throws IOException {
        String line = "p:" + group + "/" + event + " " + library + ":0x" + Long.toHexString(fileOffset) + "\n";
        Files.writeString(UPROBE_EVENTS, line, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        created.add(event);
    }

    void enable() throws IOException {
        Files.writeString(enableFile(), "1");
    }

    void disable() throws IOException {
        if (Files.exists(enableFile())) {
            Files.writeString(enableFile(), "0");
        }
    }

    private Path enableFile() {
        return TRACING.resolve("events").resolve(group).resolve("enable");
    }

    /** uprobe_profile: "  FILE EVENT NHIT" (newer kernels add a column), EVENT with or without its group. */
    Map<String, Long> hits() throws IOException {
        Map<String, Long> hits = new HashMap<>();
        for (String line : Files.readAllLines(TRACING.resolve("uprobe_profile"))) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length < 3) {
                continue;
            }
            String event = fields[1];
            if (event.contains("/")) {
                if (!event.startsWith(group + "/")) {
                    continue;
                }
                event = event.substring(group.length() + 1);
            } else if (!created.contains(event)) {
                continue;
            }
            hits.put(event, Long.parseLong(fields[2]));
        }
        return hits;
    }

    /** The hit count of one of this group's events; fails if the kernel has no line for it. */
    static long hitsOf(Map<String, Long> hits, String event) {
        Long count = hits.get(event);
        if (count == null) {
            throw new AssertionError("no uprobe_profile line for " + event + ": " + hits);
        }
        return count;
    }

    private List<String> events() throws IOException {
        // lines look like "p:infertop_it/decode_e /path:0x..."
        return Files.readAllLines(UPROBE_EVENTS).stream().filter(l -> l.contains(group + "/"))
                .map(l -> l.substring(l.indexOf(group + "/") + group.length() + 1).split("\\s+")[0]).toList();
    }

    private void removeStale() throws IOException {
        List<String> stale = events();
        if (stale.isEmpty()) {
            return;
        }
        disable();
        for (String event : stale) {
            Files.writeString(UPROBE_EVENTS, "-:" + group + "/" + event + "\n", StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
        }
    }

    /** Disables, then removes each probe this group created (never anyone else's), and checks they are gone. */
    @Override
    public void close() throws IOException {
        List<Throwable> failures = new ArrayList<>();
        try {
            disable();
        } catch (IOException e) {
            failures.add(e);
        }
        for (String event : created) {
            try {
                Files.writeString(UPROBE_EVENTS, "-:" + group + "/" + event + "\n", StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                failures.add(new IOException("removing " + event + ": " + e.getMessage(), e));
            }
        }
        created.clear();
        assertEquals(List.of(), events(), "uprobe_events still holds " + group + " probes; " + failures);
        assertEquals(List.of(), failures);
    }
}
