package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/** gcc, strip and objdump, run from tests; plus the llama.cpp workload locations. */
final class TestTools {
    static final Path LIBC = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
    static final Path WORKLOAD = Path.of(System.getProperty("user.home"), ".cache/infertop/llama.cpp-node-3.22.1");
    static final Path SOURCE_BUILD_BIN = WORKLOAD.resolve("build/bin");
    static final Path PROVISIONED_PREBUILT = WORKLOAD.resolve("prebuilt");
    /**
     * The npm @node-llama-cpp/linux-x64 libraries, as provisioning unpacked them (beside them it adds copies of
     * the tools and soname links, which the tests that read the npm files ignore).
     */
    static final Path NPM_PREBUILT = PROVISIONED_PREBUILT;

    /** Functions whose -O2 prologues gcc 12 makes predictable, covering each placement rule. */
    static final String TINY_LIBRARY_SOURCE = """
            extern long sink(long);
            /* leaf: imul first, no push */
            long leaf_multiply(long a, long b) { return a * b + 1; }
            /* six arguments live across calls: all callee-saved registers, push %r15 first */
            long keeps_six(long a, long b, long c, long d, long e, long f) {
                long x = sink(a);
                x += sink(b); x += sink(c); x += sink(d); x += sink(e); x += sink(f);
                return x * a * b * c * d * e * f;
            }
            /* a constant argument everywhere: gcc clones it as the local scaled.constprop.0 */
            static __attribute__((noinline)) long scaled(long x, long k) { return sink(x * k) + k; }
            long uses_scaled(long x) { return scaled(x, 3) + scaled(x + 1, 3); }
            /* a tail call: jmp first */
            long tail_jump(long x) { return sink(x); }
            """;

    private TestTools() {}

    /** Skips the test with {@code reason} when {@code present} is false, except under CI=true, where it fails. */
    static void requireOrSkip(boolean present, String reason) {
        if (present) {
            return;
        }
        if ("true".equals(System.getenv("CI"))) {
            fail(reason + " (CI=true: required)");
        }
        Assumptions.abort(reason);
    }

    static void requireSourceBuild() {
        requireOrSkip(Files.isExecutable(SOURCE_BUILD_BIN.resolve("llama-bench")),
                "llama.cpp source build absent: run src/scripts/provision-llama.sh (" + SOURCE_BUILD_BIN
                        + "/llama-bench)");
    }

    static void requireNpmPrebuilt() {
        requireOrSkip(Files.isRegularFile(NPM_PREBUILT.resolve("libllama.v0.5.0.so")),
                "npm @node-llama-cpp/linux-x64 libraries absent at " + NPM_PREBUILT);
    }

    /** Compiles {@link #TINY_LIBRARY_SOURCE} at -O2 into {@code dir}, with or without endbr64 entries. */
    static Path compileTinyLibrary(Path dir, boolean cfProtection) throws Exception {
        Path source = dir.resolve("tiny.c");
        Files.writeString(source, TINY_LIBRARY_SOURCE);
        Path library = dir.resolve(cfProtection ? "libtiny-cf.so" : "libtiny-nocf.so");
        run("gcc", "-O2", "-shared", "-fPIC", "-fcf-protection=" + (cfProtection ? "full" : "none"),
                "-Wl,-soname,libtiny.so.1", "-Wl,--build-id=sha1", "-o", library.toString(), source.toString());
        return library;
    }

    static Path strippedCopy(Path library, Path dir) throws Exception {
        Path copy = dir.resolve("stripped-" + library.getFileName());
        run("strip", "--strip-all", "-o", copy.toString(), library.toString());
        return copy;
    }

    /** One instruction as objdump prints it. */
    record Instruction(long vaddr, byte[] bytes, String text) {}

    /** objdump's view of the instructions from {@code vaddr} on, {@code length} bytes. */
    static List<Instruction> disassemble(Path file, long vaddr, int length) throws Exception {
        String out = run("objdump", "-d", "--start-address=0x" + Long.toHexString(vaddr),
                "--stop-address=0x" + Long.toHexString(vaddr + length), file.toString());
        Pattern line = Pattern.compile("^\\s*([0-9a-f]+):\\t((?:[0-9a-f]{2} )+)\\s*\\t?(.*)$");
        List<Instruction> instructions = new ArrayList<>();
        for (String text : out.split("\n")) {
            Matcher m = line.matcher(text);
            if (m.matches()) {
                byte[] bytes = HexFormat.of().parseHex(m.group(2).replace(" ", ""));
                long at = Long.parseLong(m.group(1), 16);
                if (m.group(3).isBlank() && !instructions.isEmpty()) {
                    // objdump wraps long instructions' bytes onto a continuation line
                    Instruction last = instructions.removeLast();
                    byte[] joined = new byte[last.bytes().length + bytes.length];
                    System.arraycopy(last.bytes(), 0, joined, 0, last.bytes().length);
                    System.arraycopy(bytes, 0, joined, last.bytes().length, bytes.length);
                    instructions.add(new Instruction(last.vaddr(), joined, last.text()));
                } else {
                    instructions.add(new Instruction(at, bytes, m.group(3).trim()));
                }
            }
        }
        return instructions;
    }

    /** A direct call as objdump prints it: {@code call 13080 <ggml_barrier@plt>}. */
    record ObjdumpCall(long vaddr, int length, long target, String label) {}

    private static final Pattern DIRECT_CALL = Pattern.compile("^(?:bnd )?call\\s+([0-9a-f]+) <([^>]+)>$");

    /** objdump's direct calls in {@code function}: the oracle for the call-site scanner. */
    static List<ObjdumpCall> objdumpCalls(Path file, ElfSymbol function) throws Exception {
        List<ObjdumpCall> calls = new ArrayList<>();
        for (Instruction instruction : disassemble(file, function.vaddr(), Math.toIntExact(function.sizeBytes()))) {
            Matcher m = DIRECT_CALL.matcher(instruction.text());
            if (m.matches()) {
                calls.add(new ObjdumpCall(instruction.vaddr(), instruction.bytes().length, Long.parseLong(m.group(1), 16),
                        m.group(2)));
            }
        }
        return calls;
    }

    /** The address of every instruction objdump -d decodes in {@code file}'s executable sections, ascending. */
    static long[] objdumpInstructionStarts(Path file) throws Exception {
        Pattern line = Pattern.compile("^\\s*([0-9a-f]+):\t(?:[0-9a-f]{2} )+\\s*\t.*$");
        Process process = new ProcessBuilder("objdump", "-d", "-w", file.toString()).redirectErrorStream(true).start();
        long[] starts = new long[1 << 16];
        int count = 0;
        try (var reader = process.inputReader(StandardCharsets.UTF_8)) {
            for (String text = reader.readLine(); text != null; text = reader.readLine()) {
                Matcher m = line.matcher(text);
                if (m.matches()) {
                    if (count == starts.length) {
                        starts = java.util.Arrays.copyOf(starts, count * 2);
                    }
                    starts[count++] = Long.parseLong(m.group(1), 16);
                }
            }
        }
        assertEquals(0, process.waitFor(), "objdump -d " + file);
        long[] result = java.util.Arrays.copyOf(starts, count);
        java.util.Arrays.sort(result);
        return result;
    }

    /** The PLT stubs objdump names {@code <symbol@plt>}, address to symbol. */
    static java.util.Map<Long, String> objdumpPltStubs(Path file) throws Exception {
        Pattern header = Pattern.compile("^([0-9a-f]+) <([^>+\\-]+)@plt>:$");
        java.util.Map<Long, String> stubs = new java.util.TreeMap<>();
        for (String text : run("objdump", "-d", "-w", file.toString()).split("\n")) {
            Matcher m = header.matcher(text);
            if (m.matches()) {
                stubs.put(Long.parseLong(m.group(1), 16), m.group(2));
            }
        }
        return stubs;
    }

    static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(String.join(" ", command) + " timed out");
        }
        assertEquals(0, process.exitValue(), () -> String.join(" ", command) + " failed:\n" + out);
        return out;
    }
}
