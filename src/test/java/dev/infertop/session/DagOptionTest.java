package dev.infertop.session;

import dev.infertop.model.Layer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** --dag FILE is checked before anything is attached: one line saying what is wrong, exit status 2. */
class DagOptionTest {
    @TempDir
    Path dir;

    private final Set<Layer> all = EnumSet.allOf(Layer.class);

    private static void assertRefused(Runnable check, String words) {
        UserError e = assertThrows(UserError.class, check::run);
        assertEquals(2, e.exitCode());
        assertTrue(e.getMessage().contains(words), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void dotAndSvgNamesInAnExistingDirectoryPass() {
        DagOption.validate(dir.resolve("decode.dot"), all);
        DagOption.validate(dir.resolve("decode.gv"), all);
        DagOption.validate(dir.resolve("decode.svg"), all); // drawn by infertop: no Graphviz needed
    }

    @Test
    void otherExtensionsMissingDirectoriesAndNoOperatorLayerAreRefused() {
        assertRefused(() -> DagOption.validate(dir.resolve("decode.png"), all), "name a .dot (Graphviz DOT) or .svg file");
        assertRefused(() -> DagOption.validate(dir.resolve("missing/decode.dot"), all), "does not exist");
        assertRefused(() -> DagOption.validate(dir.resolve("decode.dot"), EnumSet.of(Layer.TOKEN, Layer.GRAPH)),
                "needs the operator layer");
    }

    @Test
    void aLinkAtTheNameIsRefusedBeforeAnythingIsAttached() throws Exception {
        Path victim = java.nio.file.Files.writeString(dir.resolve("victim"), "precious");
        Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("decode.dot"), victim);
        assertRefused(() -> DagOption.validate(link, all), "is a symbolic link: infertop does not write through links");
        assertEquals("precious", java.nio.file.Files.readString(victim));
    }
}
