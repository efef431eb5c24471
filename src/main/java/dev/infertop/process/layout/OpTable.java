package dev.infertop.process.layout;

import dev.infertop.model.SafeText;

import java.util.List;
import java.util.OptionalInt;

/**
 * enum ggml_op and enum ggml_unary_op as the target's library names them (ggml_op_name, ggml_unary_op_name):
 * op number → name. Numbers shift between releases when ops are added, so nothing looks an op up by number.
 */
public record OpTable(List<String> opNames, List<String> unaryOpNames) {

    public OpTable {
        // Read from the target's library: its text, made visible once here (a lookup by a real op's name
        // still finds it: real names are plain ASCII).
        opNames = opNames.stream().map(SafeText::of).toList();
        unaryOpNames = unaryOpNames.stream().map(SafeText::of).toList();
    }

    /** GGML_OP_COUNT of this release. */
    public int count() {
        return opNames.size();
    }

    public String name(int op) {
        return op >= 0 && op < opNames.size() ? opNames.get(op) : "op#" + op;
    }

    public OptionalInt number(String name) {
        int op = opNames.indexOf(name);
        return op < 0 ? OptionalInt.empty() : OptionalInt.of(op);
    }

    public String unaryName(int op) {
        return op >= 0 && op < unaryOpNames.size() ? unaryOpNames.get(op) : "unary#" + op;
    }
}
