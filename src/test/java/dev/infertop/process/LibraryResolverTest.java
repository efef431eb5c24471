package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibraryResolverTest {
    private static final int CPU_VARIANTS_IN_NPM_PACKAGE = 14;

    @TempDir
    Path dir;

    @Test
    void runpathWithOriginFindsTheLibraryBehindItsSonameLink() throws Exception {
        Path exe = buildExecutable("-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib");
        ResolvedLibraries resolved = new LibraryResolver(Map.of()).resolve(exe);
        assertEquals(dir.resolve("app/lib/libtiny.so.1.0").toRealPath(), tinyIn(resolved));
        assertEquals(exe.toRealPath(), resolved.executable());
        assertEquals(List.of(), resolved.notFound());
        assertEquals(groundTruth(exe, Map.of()), Set.copyOf(resolved.needed()));
    }

    @Test
    void ldLibraryPathComesBeforeRunpath() throws Exception {
        Path exe = buildExecutable("-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib");
        Path override = copyTinyTo("override");
        Map<String, String> env = Map.of("LD_LIBRARY_PATH", override.toString());
        ResolvedLibraries resolved = new LibraryResolver(env).resolve(exe);
        assertEquals(override.resolve("libtiny.so.1.0").toRealPath(), tinyIn(resolved));
        assertEquals(groundTruth(exe, env), Set.copyOf(resolved.needed()));
    }

    @Test
    void rpathComesBeforeLdLibraryPath() throws Exception {
        Path exe = buildExecutable("-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib");
        Path override = copyTinyTo("override");
        Map<String, String> env = Map.of("LD_LIBRARY_PATH", override.toString());
        ResolvedLibraries resolved = new LibraryResolver(env).resolve(exe);
        assertEquals(dir.resolve("app/lib/libtiny.so.1.0").toRealPath(), tinyIn(resolved));
        assertEquals(groundTruth(exe, env), Set.copyOf(resolved.needed()));
    }

    @Test
    void missingLibraryIsListedAndGgmlBackendsNextToTheExecutableAreCandidates() throws Exception {
        Path exe = buildExecutable("-Wl,--enable-new-dtags", "-Wl,-rpath,/nonexistent");
        Path backend = exe.resolveSibling("libggml-fake.so");
        Files.copy(dir.resolve("app/lib/libtiny.so.1.0"), backend);
        Files.writeString(exe.resolveSibling("libggml-notelf.so"), "not a library");
        ResolvedLibraries resolved = new LibraryResolver(Map.of()).resolve(exe);
        assertEquals(List.of("libtiny.so.1"), resolved.notFound());
        assertEquals(List.of(backend.toRealPath()), resolved.dlopenCandidates());
        assertEquals(List.of(backend.toRealPath()), resolved.inferenceLibraries());
    }

    @Test
    void commandsAreFoundAlongPath() throws Exception {
        LibraryResolver resolver = new LibraryResolver(Map.of("PATH", "/nonexistent:/usr/bin:/bin"));
        assertEquals(Path.of("/usr/bin/env"), resolver.findExecutable("env"));
        assertEquals("command not found on PATH: no-such-command-here",
                assertThrows(TargetException.class, () -> resolver.findExecutable("no-such-command-here")).getMessage());
        ResolvedLibraries env = resolver.resolve(resolver.findExecutable("env"));
        assertTrue(env.needed().contains(TestTools.LIBC.toRealPath()), env.needed().toString());
        assertTrue(env.inferenceLibraries().isEmpty());
    }

    @Test
    void nonElfExecutableIsNamed() throws Exception {
        Path script = Files.writeString(dir.resolve("run.sh"), "#!/bin/sh\necho hi\n");
        TargetException e = assertThrows(TargetException.class, () -> new LibraryResolver(Map.of()).resolve(script));
        assertEquals("not an ELF64 little-endian file: " + script.toRealPath(), e.getMessage());
    }

    @Test
    void sourceBuildLlamaBenchLoadsTheSourceBuiltLibraries() throws Exception {
        TestTools.requireSourceBuild();
        Path exe = TestTools.SOURCE_BUILD_BIN.resolve("llama-bench");
        ResolvedLibraries resolved = new LibraryResolver(Map.of()).resolve(exe);
        Set<String> names = fileNames(resolved.needed());
        for (String expected : List.of("libllama.so.0.5.0", "libggml-base.so.0.25.1", "libggml-cpu.so.0.25.1",
                "libggml.so.0.25.1")) {
            assertTrue(names.contains(expected), expected + " not in " + names);
        }
        Path buildDir = TestTools.SOURCE_BUILD_BIN.toRealPath();
        assertTrue(resolved.inferenceLibraries().stream().allMatch(p -> p.startsWith(buildDir)), resolved.toString());
        assertEquals(List.of(), resolved.notFound());
        assertEquals(groundTruth(exe, Map.of()), Set.copyOf(resolved.needed()));
    }

    @Test
    void provisionedPrebuiltDirectoryLoadsTheNpmLibrariesAndOffersEveryCpuVariant() throws Exception {
        TestTools.requireOrSkip(Files.isExecutable(TestTools.PROVISIONED_PREBUILT.resolve("llama-bench")),
                "provisioned prebuilt llama.cpp absent: run src/scripts/provision-llama.sh ("
                        + TestTools.PROVISIONED_PREBUILT + "/llama-bench)");
        assertLoadsPrebuilt(TestTools.PROVISIONED_PREBUILT);
    }

    @Test
    void selfMadePrebuiltDirectoryLoadsTheNpmLibrariesAndOffersEveryCpuVariant() throws Exception {
        TestTools.requireSourceBuild();
        TestTools.requireNpmPrebuilt();
        // What provisioning should produce: the source-built tool and its impl library, the npm libraries,
        // and every soname the tool's DT_NEEDED closure asks for linked to the npm file of that name.
        Path prebuilt = Files.createDirectories(dir.resolve("prebuilt"));
        Files.copy(TestTools.SOURCE_BUILD_BIN.resolve("llama-bench"), prebuilt.resolve("llama-bench"));
        Files.copy(TestTools.SOURCE_BUILD_BIN.resolve("libllama-bench-impl.so"), prebuilt.resolve("libllama-bench-impl.so"));
        try (var npm = Files.list(TestTools.NPM_PREBUILT)) {
            for (Path library : npm.filter(p -> p.toString().endsWith(".so")).toList()) {
                if (Files.exists(prebuilt.resolve(library.getFileName()), java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        || library.getFileName().toString().endsWith("-impl.so")) {
                    continue; // a source-built helper library provisioning added beside the npm files
                }
                Files.createSymbolicLink(prebuilt.resolve(library.getFileName()), library);
            }
        }
        Map<String, String> sonameToNpm = Map.of("libllama.so.0", "libllama.v0.5.0.so", "libggml.so.0", "libggml.v0.5.0.so",
                "libggml-base.so.0", "libggml-base.so", "libllama-common.so.0", "libllama-common.so");
        for (var link : sonameToNpm.entrySet()) {
            Files.createSymbolicLink(prebuilt.resolve(link.getKey()), Path.of(link.getValue()));
        }
        assertLoadsPrebuilt(prebuilt);
    }

    private void assertLoadsPrebuilt(Path prebuilt) throws Exception {
        Map<String, String> env = Map.of("LD_LIBRARY_PATH", prebuilt.toString());
        ResolvedLibraries resolved = new LibraryResolver(env).resolve(prebuilt.resolve("llama-bench"));
        Set<String> loaded = fileNames(resolved.needed());
        assertTrue(loaded.contains("libllama.v0.5.0.so"), "the prebuilt libllama, not the source build's: " + loaded);
        assertTrue(loaded.contains("libggml-base.so"), loaded.toString());
        assertFalse(loaded.contains("libllama.so.0.5.0"), "source-built libllama leaked in: " + resolved.needed());
        Set<String> cpuVariants = resolved.dlopenCandidates().stream().map(p -> p.getFileName().toString())
                .filter(n -> n.startsWith("libggml-cpu-")).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(CPU_VARIANTS_IN_NPM_PACKAGE, cpuVariants.size(), cpuVariants.toString());
        assertTrue(resolved.inferenceLibraries().containsAll(resolved.dlopenCandidates()));
        assertEquals(groundTruth(prebuilt.resolve("llama-bench"), env), Set.copyOf(resolved.needed()));
    }

    /** What ld.so itself loads: it lists its choices instead of running the program under LD_TRACE_LOADED_OBJECTS. */
    private static Set<Path> groundTruth(Path exe, Map<String, String> env) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(exe.toString()).redirectErrorStream(true);
        builder.environment().remove("LD_LIBRARY_PATH");
        builder.environment().putAll(env);
        builder.environment().put("LD_TRACE_LOADED_OBJECTS", "1");
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        Set<Path> loaded = new TreeSet<>();
        Matcher m = Pattern.compile("^\\s*(?:\\S+ => )?(/\\S+) \\(0x[0-9a-f]+\\)$", Pattern.MULTILINE).matcher(out);
        while (m.find()) {
            Path library = Path.of(m.group(1)).toRealPath();
            if (!library.equals(exe.toRealPath())) {
                loaded.add(library);
            }
        }
        assertFalse(out.contains("not found"), out);
        // the interpreter comes from PT_INTERP, not DT_NEEDED: count it only if something needs it by name
        return loaded;
    }

    /** app/bin/app needing libtiny.so.1, which lives in app/lib as libtiny.so.1.0 behind a soname link. */
    private Path buildExecutable(String... linkOptions) throws Exception {
        Path lib = Files.createDirectories(dir.resolve("app/lib"));
        Path bin = Files.createDirectories(dir.resolve("app/bin"));
        Path libSource = Files.writeString(dir.resolve("tiny.c"), "int tiny(void) { return 1; }\n");
        TestTools.run("gcc", "-shared", "-fPIC", "-Wl,-soname,libtiny.so.1", "-o", lib.resolve("libtiny.so.1.0").toString(),
                libSource.toString());
        Files.createSymbolicLink(lib.resolve("libtiny.so.1"), Path.of("libtiny.so.1.0"));
        Files.createSymbolicLink(lib.resolve("libtiny.so"), Path.of("libtiny.so.1.0"));
        Path mainSource = Files.writeString(dir.resolve("main.c"), "int tiny(void);\nint main(void) { return tiny() - 1; }\n");
        Path exe = bin.resolve("app");
        List<String> command = new java.util.ArrayList<>(List.of("gcc", "-o", exe.toString(), mainSource.toString(),
                "-L" + lib, "-ltiny"));
        command.addAll(List.of(linkOptions));
        TestTools.run(command.toArray(String[]::new));
        return exe;
    }

    private Path copyTinyTo(String name) throws Exception {
        Path other = Files.createDirectories(dir.resolve(name));
        Files.copy(dir.resolve("app/lib/libtiny.so.1.0"), other.resolve("libtiny.so.1.0"));
        Files.createSymbolicLink(other.resolve("libtiny.so.1"), Path.of("libtiny.so.1.0"));
        return other;
    }

    private static Path tinyIn(ResolvedLibraries resolved) {
        return resolved.needed().stream().filter(p -> p.getFileName().toString().startsWith("libtiny")).findFirst()
                .orElseThrow(() -> new AssertionError("libtiny not resolved: " + resolved));
    }

    private static Set<String> fileNames(List<Path> paths) {
        return paths.stream().map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }

}
