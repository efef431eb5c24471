package dev.infertop.it;

import dev.infertop.process.ElfFile;
import dev.infertop.process.Machine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release tarball a board installs (src/scripts/package.sh): unpacked anywhere, its launcher runs its own jar
 * and prints the pom's version; the jar carries the BPF object and the native helpers for x86_64 and arm64 (the
 * arm64 helpers static, so they run on any arm64 libc).
 */
class ReleaseTarballIT {
    @TempDir
    Path unpacked;

    @Test
    void theTarballUnpacksAndRunsAndCarriesBothArchitectures() throws Exception {
        Requirements.jar();
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/aarch64-linux-gnu-gcc")),
                "needs gcc-aarch64-linux-gnu for the jar's arm64 helpers (setup.sh installs it)");
        String tarball = run(List.of("bash", "src/scripts/package.sh")).strip();
        Path file = Path.of(tarball.lines().reduce((a, b) -> b).orElseThrow());
        String name = file.getFileName().toString().replace(".tar.gz", "");
        assertTrue(name.startsWith("infertop-"), file.toString());
        run(List.of("tar", "xzf", file.toString(), "-C", unpacked.toString()));
        Path home = unpacked.resolve(name);
        for (String entry : List.of("bin/infertop", "bin/jdk25.sh", "bin/infertop.jar", "man/man1/infertop.1",
                "man/man1/infertop-report.1", "config/keys.conf", "INSTALL")) {
            assertTrue(Files.exists(home.resolve(entry)), "the tarball holds " + entry);
        }
        String version = name.substring("infertop-".length());
        String printed = run(List.of(home.resolve("bin/infertop").toString(), "--version")).strip();
        assertEquals("infertop " + version, printed, "the launcher runs the tarball's own jar");

        Path jarContents = unpacked.resolve("jar");
        Files.createDirectories(jarContents);
        List<String> extract = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jar")
                .toString(), "xf", home.resolve("bin/infertop.jar").toString()));
        for (String arch : List.of("x86_64", "arm64")) {
            extract.addAll(List.of("dev/infertop/bpf/" + arch + "/infertop.bpf.o",
                    "dev/infertop/process/layout/" + arch + "/enter-target-root", "dev/infertop/machine/" + arch
                            + "/uprobe-cost", "dev/infertop/process/" + arch + "/launch-target"));
        }
        run(extract, jarContents);
        for (String arch : List.of("x86_64", "arm64")) {
            Machine machine = arch.equals("arm64") ? Machine.AARCH64 : Machine.X86_64;
            for (String helper : List.of("dev/infertop/process/layout/" + arch + "/enter-target-root",
                    "dev/infertop/machine/" + arch + "/uprobe-cost", "dev/infertop/process/" + arch + "/launch-target")) {
                Path binary = jarContents.resolve(helper);
                assertEquals(java.util.Optional.of(machine), ElfFile.peekMachine(binary), helper);
                if (arch.equals("arm64")) {
                    try (ElfFile elf = ElfFile.open(binary)) {
                        assertTrue(elf.needed().isEmpty(), helper + " is static (no DT_NEEDED): " + elf.needed());
                    }
                }
            }
            assertTrue(Files.exists(jarContents.resolve("dev/infertop/bpf/" + arch + "/infertop.bpf.o")), arch);
        }
    }

    private static String run(List<String> command) throws Exception {
        return run(command, null);
    }

    private static String run(List<String> command, Path directory) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(300, TimeUnit.SECONDS), String.join(" ", command) + " hung");
        assertEquals(0, process.exitValue(), String.join(" ", command) + ":\n" + output);
        return output;
    }
}
