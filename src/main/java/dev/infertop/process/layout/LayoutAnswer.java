package dev.infertop.process.layout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the calibration child prints on stdout and the root process reads back: the calibrated numbers and names
 * only, as a few lines of ASCII text, or one error line. The reader trusts nothing in it: the text is bounded,
 * every line and key is expected, every number parsed strictly, and the layout it gives is then checked by
 * {@link LayoutInvariants}. Library path, build-id and the empty-op list are the reader's own, never the child's.
 *
 * <pre>
 * infertop-layout 2
 * tensor type=0 ne=16 nb=48 op=80 op_params=84 op_params_bytes=64 flags=148 src=152 max_src=10 view_src=232 …
 * graph size=0 n_nodes=4 n_leafs=8 nodes=16
 * flags output=2 compute=16
 * ops NONE DUP ADD …
 * unary ABS SGN …
 * types f32 f16 q4_0 q4_1 - - q5_0 …      ("-": a removed type)
 * typesizes 4/1 2/1 18/32 20/32 - - 22/32 …  (bytes/elements per block by type; "-": a gap or unknown)
 * end
 * </pre>
 * or {@code error <one line>}.
 */
final class LayoutAnswer {
    private LayoutAnswer() {}

    static final String HEADER = "infertop-layout 2";
    static final String ERROR = "error ";
    static final String GAP = "-";
    /** Far above a real answer (~3 KB for v0.5.0): 512 names of 127 chars in each of three tables. */
    static final int MAX_BYTES = 256 * 1024;
    /** What of an error line is kept. */
    static final int MAX_ERROR_CHARS = 300;

    private static final List<String> TENSOR_KEYS = List.of("type", "ne", "nb", "op", "op_params", "op_params_bytes",
            "flags", "src", "max_src", "view_src", "view_offs", "data", "name", "max_name", "size");
    private static final List<String> GRAPH_KEYS = List.of("size", "n_nodes", "n_leafs", "nodes");
    private static final List<String> FLAG_KEYS = List.of("output", "compute");

    static String write(CalibratedLayout layout) {
        TensorLayout t = layout.tensor();
        GraphLayout g = layout.graph();
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        out.append("tensor").append(pairs(TENSOR_KEYS, t.typeOffset(), t.neOffset(), t.nbOffset(), t.opOffset(),
                t.opParamsOffset(), t.opParamsBytes(), t.flagsOffset(), t.srcOffset(), t.maxSrc(), t.viewSrcOffset(),
                t.viewOffsOffset(), t.dataOffset(), t.nameOffset(), t.maxNameBytes(), t.sizeBytes())).append('\n');
        out.append("graph").append(pairs(GRAPH_KEYS, g.sizeOffset(), g.nodeCountOffset(), g.leafCountOffset(),
                g.nodesOffset())).append('\n');
        out.append("flags").append(pairs(FLAG_KEYS, layout.outputFlag(), layout.computeFlag())).append('\n');
        out.append("ops").append(words(layout.ops().opNames())).append('\n');
        out.append("unary").append(words(layout.ops().unaryOpNames())).append('\n');
        out.append("types").append(words(layout.types().names())).append('\n');
        out.append("typesizes");
        for (int type = 0; type < layout.types().count(); type++) {
            out.append(' ').append(layout.types().blockSize(type).map(TypeTable.BlockSize::toString).orElse(GAP));
        }
        out.append('\n');
        return out.append("end\n").toString();
    }

    /** The one line a child prints when calibration fails (control characters and newlines flattened). */
    static String error(String message) {
        return ERROR + printable(message) + "\n";
    }

    private static String pairs(List<String> keys, int... values) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < keys.size(); i++) {
            out.append(' ').append(keys.get(i)).append('=').append(values[i]);
        }
        return out.toString();
    }

    private static String words(List<String> names) {
        StringBuilder out = new StringBuilder();
        for (String name : names) {
            out.append(' ').append(name == null ? GAP : name);
        }
        return out.toString();
    }

    /**
     * The layout in {@code text}, with {@code library} and {@code buildId} as the caller knows them; a
     * CalibrationException for an error answer, anything malformed, or a layout that breaks an invariant.
     */
    static CalibratedLayout read(String text, Path library, String buildId) throws CalibrationException {
        if (text.length() > MAX_BYTES) {
            throw malformed(library, "it is over " + MAX_BYTES + " bytes");
        }
        if (text.startsWith(ERROR)) {
            String line = text.substring(ERROR.length()).lines().findFirst().orElse("");
            throw CalibrationException.of(library, printable(line));
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '\n' && (c < 0x20 || c > 0x7e)) {
                throw malformed(library, "it holds a byte outside printable ASCII");
            }
        }
        List<String> lines = text.lines().toList();
        List<String> expected = List.of(HEADER, "tensor", "graph", "flags", "ops", "unary", "types", "typesizes", "end");
        if (lines.size() != expected.size() || !lines.getFirst().equals(HEADER) || !lines.getLast().equals("end")) {
            throw malformed(library, "it is not " + expected.size() + " lines from '" + HEADER + "' to 'end'");
        }
        Map<String, List<String>> rows = new LinkedHashMap<>();
        for (int i = 1; i < lines.size() - 1; i++) {
            List<String> words = Arrays.asList(lines.get(i).split(" ", -1));
            if (!words.getFirst().equals(expected.get(i))) {
                throw malformed(library, "line " + (i + 1) + " is not '" + expected.get(i) + " …'");
            }
            rows.put(words.getFirst(), words.subList(1, words.size()));
        }
        int[] t = numbers(library, "tensor", rows.get("tensor"), TENSOR_KEYS);
        int[] g = numbers(library, "graph", rows.get("graph"), GRAPH_KEYS);
        int[] f = numbers(library, "flags", rows.get("flags"), FLAG_KEYS);
        TensorLayout tensor = new TensorLayout(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11],
                t[12], t[13], t[14]);
        GraphLayout graph = new GraphLayout(g[0], g[1], g[2], g[3]);
        OpTable ops = new OpTable(names(library, "ops", rows.get("ops"), false),
                names(library, "unary", rows.get("unary"), false));
        List<String> typeNames = names(library, "types", rows.get("types"), true);
        TypeTable types = new TypeTable(typeNames, blockSizes(library, rows.get("typesizes"), typeNames.size()));
        CalibratedLayout layout = new CalibratedLayout(library.toString(), buildId, tensor, graph, ops, types, f[0], f[1],
                LayoutCalibrator.emptyOps(ops));
        LayoutInvariants.check(library, layout);
        return layout;
    }

    private static int[] numbers(Path library, String row, List<String> words, List<String> keys)
            throws CalibrationException {
        if (words.size() != keys.size()) {
            throw malformed(library, "'" + row + "' has " + words.size() + " fields, not " + keys.size());
        }
        int[] values = new int[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            String prefix = keys.get(i) + "=";
            String word = words.get(i);
            if (!word.startsWith(prefix)) {
                throw malformed(library, "'" + row + "' field " + (i + 1) + " is not " + keys.get(i));
            }
            String digits = word.substring(prefix.length());
            if (!digits.matches("-?[0-9]{1,9}")) {
                throw malformed(library, "'" + row + "' " + keys.get(i) + " is not a number");
            }
            values[i] = Integer.parseInt(digits);
        }
        return values;
    }

    private static List<String> names(Path library, String row, List<String> words, boolean gaps)
            throws CalibrationException {
        if (words.size() > NameTableReader.MAX_ENTRIES) {
            throw malformed(library, "'" + row + "' has " + words.size() + " names");
        }
        List<String> names = new ArrayList<>(words.size());
        for (String word : words) {
            if (word.isEmpty()) {
                throw malformed(library, "'" + row + "' has an empty name");
            }
            names.add(gaps && word.equals(GAP) ? null : word);
        }
        return names;
    }

    /** "18/32" words, one per type ("-" unknown); bounds are LayoutInvariants'. */
    private static List<TypeTable.BlockSize> blockSizes(Path library, List<String> words, int types)
            throws CalibrationException {
        if (words.size() != types) {
            throw malformed(library, "'typesizes' has " + words.size() + " sizes for " + types + " types");
        }
        List<TypeTable.BlockSize> sizes = new ArrayList<>(types);
        for (String word : words) {
            if (word.equals(GAP)) {
                sizes.add(null);
            } else if (word.matches("[0-9]{1,6}/[0-9]{1,6}")) {
                int slash = word.indexOf('/');
                sizes.add(new TypeTable.BlockSize(Long.parseLong(word.substring(0, slash)),
                        Long.parseLong(word.substring(slash + 1))));
            } else {
                throw malformed(library, "'typesizes' holds '" + printable(word) + "'");
            }
        }
        return sizes;
    }

    private static CalibrationException malformed(Path library, String what) {
        return CalibrationException.of(library, "the calibration child's answer is malformed: " + what);
    }

    /** {@code text} on one line of printable ASCII, at most {@link #MAX_ERROR_CHARS} long. */
    static String printable(String text) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length() && out.length() < MAX_ERROR_CHARS; i++) {
            char c = text.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : (c == '\n' || c == '\t' ? ' ' : '?'));
        }
        return out.toString();
    }
}
