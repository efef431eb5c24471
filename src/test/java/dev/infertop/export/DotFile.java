package dev.infertop.export;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads back the DOT that {@link DagDotWriter} writes: statements one per line, attributes key=value. */
public final class DotFile {
    private static final Pattern NODE = Pattern.compile("^\\s*([nl]\\d+) \\[(.*)];$");
    private static final Pattern EDGE = Pattern.compile("^\\s*([nl]\\d+) -> ([nl]\\d+)(?: \\[(.*)])?;$");
    private static final Pattern ATTRIBUTE = Pattern.compile("(\\w+)=(\"((?:[^\"\\\\]|\\\\.)*)\"|[^,\\s]+)");

    public final Map<String, Map<String, String>> nodes = new LinkedHashMap<>();
    public final List<String[]> edges = new ArrayList<>(); // {from, to, attributes}
    public final Map<String, String> graph = new LinkedHashMap<>();

    public static DotFile parse(String text) {
        DotFile dot = new DotFile();
        for (String line : text.split("\n")) {
            Matcher edge = EDGE.matcher(line);
            Matcher node = NODE.matcher(line);
            if (edge.matches()) {
                dot.edges.add(new String[] {edge.group(1), edge.group(2), edge.group(3) == null ? "" : edge.group(3)});
            } else if (node.matches()) {
                dot.nodes.put(node.group(1), attributes(node.group(2)));
            } else if (line.strip().startsWith("graph [")) {
                dot.graph.putAll(attributes(line.strip().substring(7, line.strip().length() - 2)));
            }
        }
        return dot;
    }

    static Map<String, String> attributes(String text) {
        Map<String, String> result = new LinkedHashMap<>();
        Matcher m = ATTRIBUTE.matcher(text);
        while (m.find()) {
            result.put(m.group(1), m.group(3) != null ? m.group(3).replace("\\\"", "\"").replace("\\\\", "\\") : m.group(2));
        }
        return result;
    }

    /** Ids of the nodes node {@code id} reads (edges into it). */
    public List<String> sourcesOf(String id) {
        List<String> result = new ArrayList<>();
        for (String[] edge : edges) {
            if (edge[1].equals(id)) {
                result.add(edge[0]);
            }
        }
        return result;
    }

    /** Ids of the nodes that read node {@code id}. */
    public List<String> consumersOf(String id) {
        List<String> result = new ArrayList<>();
        for (String[] edge : edges) {
            if (edge[0].equals(id)) {
                result.add(edge[1]);
            }
        }
        return result;
    }

    /** The node whose tensor_name is {@code name}, or null. */
    public String named(String name) {
        for (Map.Entry<String, Map<String, String>> node : nodes.entrySet()) {
            if (name.equals(node.getValue().get("tensor_name"))) {
                return node.getKey();
            }
        }
        return null;
    }
}
