package dev.infertop.machine;

import dev.infertop.ffi.LibBpf;
import dev.infertop.ffi.OwnPriority;
import dev.infertop.ffi.Errno;
import dev.infertop.ffi.PerfEvent;
import dev.infertop.process.ElfFile;
import dev.infertop.process.ElfSymbol;
import dev.infertop.process.TargetException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Measures {@link UprobeHitCost}: runs infertop's own loop program (native/tools/uprobe-cost.c, built for this
 * architecture into the jar) and, round after round, times N calls without a probe, then N calls with a counting
 * perf uprobe (no BPF program: the trap and the kernel's uprobe handling, which every hit pays) on its call
 * instruction, opened for that process only. Cost per hit = the fastest probed round less the fastest plain one,
 * over the hits the event counted. About 0.3-1 s; needs root (perf_event_open of a uprobe).
 */
public final class UprobeCostProbe {
    private UprobeCostProbe() {}

    static final int ROUNDS = 7;
    static final long CALLS_PER_ROUND = 50_000;
    private static final String SITE = "infertop_probe_site";
    private static final Path UPROBE_PMU_TYPE = Path.of("/sys/bus/event_source/devices/uprobe/type");

    public static UprobeHitCost measure() throws IOException {
        Path dir = Files.createTempDirectory("infertop-uprobe-cost",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path program = dir.resolve("uprobe-cost");
        try {
            extractProgram(program);
            long offset = siteFileOffset(program);
            int pmuType = Integer.parseInt(Files.readString(UPROBE_PMU_TYPE).trim());
            return measure(program, offset, pmuType);
        } catch (NumberFormatException e) {
            throw new IOException("cannot read " + UPROBE_PMU_TYPE + ": " + e.getMessage());
        } finally {
            Files.deleteIfExists(program);
            Files.deleteIfExists(dir);
        }
    }

    private static void extractProgram(Path program) throws IOException {
        String arch = switch (System.getProperty("os.arch")) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "arm64";
            default -> throw new IOException("no uprobe-cost program for " + System.getProperty("os.arch"));
        };
        String resource = arch + "/uprobe-cost";
        try (InputStream in = UprobeCostProbe.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("this build of infertop has no " + resource
                        + " (it is built for the build machine's architecture only)");
            }
            Files.copy(in, program, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwx------"));
    }

    private static long siteFileOffset(Path program) throws IOException {
        try (ElfFile elf = ElfFile.open(program)) {
            ElfSymbol site = elf.function(SITE).orElseThrow(() -> new IOException(program + " has no " + SITE));
            return elf.fileOffsetOf(site.vaddr());
        } catch (TargetException e) {
            throw new IOException("cannot read " + program + ": " + e.getMessage());
        }
    }

    private static UprobeHitCost measure(Path program, long offset, int pmuType) throws IOException {
        Process child = OwnPriority.start(
                new ProcessBuilder(program.toString()).redirectError(ProcessBuilder.Redirect.INHERIT));
        try (Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.US_ASCII);
             BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII))) {
            timeCalls(in, out); // warm-up: page faults, CPU frequency
            long[] plainNs = new long[ROUNDS];
            long[] probedNs = new long[ROUNDS];
            for (int round = 0; round < ROUNDS; round++) {
                plainNs[round] = timeCalls(in, out);
                int fd = openCountingUprobe(pmuType, program, offset, child.pid());
                long hits;
                try {
                    probedNs[round] = timeCalls(in, out);
                    hits = readCount(fd);
                } finally {
                    PerfEvent.closeFd(fd);
                }
                if (hits != CALLS_PER_ROUND) {
                    throw new IOException("the probe counted " + hits + " hits for " + CALLS_PER_ROUND + " calls");
                }
            }
            // Other work on the machine only ever adds time: the fastest round of each kind is the closest to
            // the cost itself, and the rounds' own differences give the spread.
            double[] perRound = new double[ROUNDS];
            for (int round = 0; round < ROUNDS; round++) {
                perRound[round] = Math.max(0, probedNs[round] - plainNs[round]) / (double) CALLS_PER_ROUND;
            }
            Arrays.sort(perRound);
            double nsPerHit = Math.max(0, Arrays.stream(probedNs).min().orElseThrow()
                    - Arrays.stream(plainNs).min().orElseThrow()) / (double) CALLS_PER_ROUND;
            String kernel = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
            return new UprobeHitCost(UprobeHitCost.FORMAT_VERSION, Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
                    kernel, nsPerHit, Math.min(nsPerHit, perRound[0]), Math.max(nsPerHit, perRound[ROUNDS - 1]), ROUNDS,
                    CALLS_PER_ROUND, "perf uprobe on a call instruction, " + CALLS_PER_ROUND
                    + " calls a round; fastest probed round less fastest plain one, of " + ROUNDS);
        } finally {
            child.destroyForcibly();
        }
    }

    private static long timeCalls(Writer in, BufferedReader out) throws IOException {
        in.write(CALLS_PER_ROUND + "\n");
        in.flush();
        String line = out.readLine();
        try {
            long ns = line == null ? -1 : Long.parseLong(line.trim());
            if (ns <= 0) {
                throw new IOException("the uprobe-cost program stopped answering");
            }
            return ns;
        } catch (NumberFormatException e) {
            throw new IOException("unexpected answer from the uprobe-cost program: " + line);
        }
    }

    /** A counting uprobe on {@code offset} of {@code program}, in process {@code pid} only. */
    private static int openCountingUprobe(int pmuType, Path program, long offset, long pid) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = PerfEvent.Attr.counting(arena, pmuType, 0); // config 0: entry, not return
            MemorySegment path = arena.allocateFrom(program.toString());
            attr.set(ValueLayout.JAVA_LONG, PerfEvent.Attr.CONFIG1, path.address()); // uprobe_path
            attr.set(ValueLayout.JAVA_LONG, PerfEvent.Attr.CONFIG2, offset);        // probe_offset
            MemorySegment state = Errno.allocate(arena);
            long fd = (long) PerfEvent.syscall.invokeExact(state, PerfEvent.syscallNumber(), attr, (int) pid, -1, -1,
                    PerfEvent.FLAG_FD_CLOEXEC);
            if (fd < 0) {
                throw new IOException("perf_event_open of a uprobe failed: " + LibBpf.strerror(Errno.read(state)));
            }
            return (int) fd;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static long readCount(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(24, 8); // value, time enabled, time running
            long read = PerfEvent.read(fd, value);
            if (read < 8) {
                throw new IOException("cannot read the uprobe's count");
            }
            return value.get(ValueLayout.JAVA_LONG, 0);
        }
    }
}
