package dev.infertop.process.layout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Ground truth from a release's own C headers: a tiny program compiled with gcc against ggml/include/ggml.h and
 * ggml/src/ggml-impl.h prints offsetof() of every calibrated field, sizeof, and the enum values that matter.
 * Nothing is copied from the headers into the tests.
 */
final class HeaderFacts {
    private final Map<String, Long> facts;

    private HeaderFacts(Map<String, Long> facts) {
        this.facts = facts;
    }

    long get(String name) {
        Long value = facts.get(name);
        if (value == null) {
            throw new IllegalArgumentException("the header program printed no " + name + ": " + facts.keySet());
        }
        return value;
    }

    boolean has(String name) {
        return facts.containsKey(name);
    }

    /** Empty when the program does not compile (then graph offsets are checked through the graph API only). */
    static Optional<HeaderFacts> compile(Path source, Path workDir, boolean withGraph) throws IOException, InterruptedException {
        String header = Files.readString(source.resolve("ggml/include/ggml.h"));
        StringBuilder c = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include "ggml.h"
                """);
        if (withGraph) {
            c.append("#include \"ggml-impl.h\"\n");
        }
        c.append("""
                #define OFF(s, f) printf(#s "." #f " %zu\\n", offsetof(struct s, f))
                #define VAL(n) printf(#n " %lld\\n", (long long) (n))
                int main(void) {
                    OFF(ggml_tensor, type); OFF(ggml_tensor, ne); OFF(ggml_tensor, nb); OFF(ggml_tensor, op);
                    OFF(ggml_tensor, op_params); OFF(ggml_tensor, flags); OFF(ggml_tensor, src);
                    OFF(ggml_tensor, view_src); OFF(ggml_tensor, view_offs); OFF(ggml_tensor, data);
                    OFF(ggml_tensor, name);
                    VAL(sizeof(struct ggml_tensor)); VAL(GGML_MAX_SRC); VAL(GGML_MAX_NAME); VAL(GGML_MAX_OP_PARAMS);
                    VAL(GGML_OP_COUNT); VAL(GGML_UNARY_OP_COUNT); VAL(GGML_TYPE_COUNT);
                    VAL(GGML_OP_NONE); VAL(GGML_OP_RESHAPE); VAL(GGML_OP_VIEW); VAL(GGML_OP_PERMUTE);
                    VAL(GGML_OP_TRANSPOSE); VAL(GGML_OP_ADD); VAL(GGML_OP_MUL_MAT);
                    VAL(GGML_TYPE_F32); VAL(GGML_TYPE_F16); VAL(GGML_TENSOR_FLAG_OUTPUT);
                """);
        if (header.contains("GGML_TENSOR_FLAG_COMPUTE")) {
            c.append("    VAL(GGML_TENSOR_FLAG_COMPUTE);\n");
        }
        if (withGraph) {
            c.append("""
                        OFF(ggml_cgraph, size); OFF(ggml_cgraph, n_nodes); OFF(ggml_cgraph, n_leafs);
                        OFF(ggml_cgraph, nodes);
                    """);
        }
        c.append("    return 0;\n}\n");
        Path program = workDir.resolve("offsets.c");
        Path binary = workDir.resolve("offsets");
        Files.writeString(program, c);
        // -O2: unused static inline helpers of ggml-impl.h (which call ggml_abort) are not emitted, so no link errors.
        if (run(List.of("gcc", "-O2", "-I", source.resolve("ggml/include").toString(), "-I",
                source.resolve("ggml/src").toString(), "-o", binary.toString(), program.toString())) == null) {
            return Optional.empty();
        }
        String output = run(List.of(binary.toString()));
        if (output == null) {
            return Optional.empty();
        }
        Map<String, Long> facts = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            int space = line.trim().lastIndexOf(' ');
            facts.put(line.trim().substring(0, space), Long.parseLong(line.trim().substring(space + 1)));
        }
        return Optional.of(new HeaderFacts(facts));
    }

    /** Same, with ggml-impl.h when it compiles, else ggml.h alone. */
    static HeaderFacts of(LlamaReleases release, Path workDir) throws IOException, InterruptedException {
        return compile(release.source(), workDir, true)
                .or(() -> {
                    try {
                        return compile(release.source(), workDir, false);
                    } catch (IOException | InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .orElseThrow(() -> new IllegalStateException("cannot compile a program against " + release.source()
                        + "/ggml/include/ggml.h with gcc"));
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            System.err.println(String.join(" ", command) + " failed:\n" + new String(output, StandardCharsets.UTF_8));
            return null;
        }
        return new String(output, StandardCharsets.UTF_8);
    }
}
