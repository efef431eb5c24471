package dev.infertop;

import dev.infertop.model.Layer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A layer is data: the classes every layer goes through iterate over the layers' descriptions and name no
 * particular layer in their code (comments may), so that adding a layer touches its own classes and its
 * registration, not them.
 */
class SharedCodeNamesNoLayerTest {
    private static final Path SOURCES = Path.of("src/main/java/dev/infertop");
    private static final List<String> SHARED = List.of("bpf/ProbeSet.java", "agg/TraceAggregator.java");
    private static final Pattern A_LAYER = Pattern.compile("\\bLayer\\.([A-Z][A-Z_]*)\\b");

    @Test
    void sharedClassesNameNoParticularLayer() throws IOException {
        List<String> named = new ArrayList<>();
        for (String file : SHARED) {
            Matcher m = A_LAYER.matcher(LayeringTest.codeOnly(Files.readString(SOURCES.resolve(file))));
            while (m.find()) {
                named.add(file + ": Layer." + m.group(1));
            }
        }
        assertEquals(List.of(), named);
    }

    @Test
    void theCheckSeesALayerNamedInCode() {
        String code = "class X { // Layer.MOE in a comment\n Object o = Layer." + Layer.MOE.name() + "; }";
        Matcher m = A_LAYER.matcher(LayeringTest.codeOnly(code));
        assertEquals(true, m.find());
        assertEquals("MOE", m.group(1));
        assertEquals(false, m.find());
    }
}
