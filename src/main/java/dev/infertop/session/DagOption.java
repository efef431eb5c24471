package dev.infertop.session;

import dev.infertop.export.DagDotWriter;
import dev.infertop.model.Layer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * Checks --dag FILE before anything is attached, so a bad name fails at once, not at exit. A .svg needs no
 * Graphviz: infertop draws it itself.
 */
final class DagOption {
    private DagOption() {}

    static void validate(Path file, Set<Layer> layers) {
        String format = DagDotWriter.format(file);
        if (format.isEmpty()) {
            throw new UserError("--dag " + file + ": name a .dot (Graphviz DOT) or .svg file", 2);
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new UserError("--dag " + file + ": directory " + parent + " does not exist", 2);
        }
        if (Files.isSymbolicLink(file)) { // written as root at exit: never through a link (checked again then)
            throw new UserError("--dag " + file + " is a symbolic link: infertop does not write through links (it"
                    + " runs as root); remove it or choose another name", 2);
        }
        if (!layers.contains(Layer.OPERATOR)) {
            throw new UserError("--dag needs the operator layer (it reads the graph's nodes): add operator to --layers", 2);
        }
    }
}
