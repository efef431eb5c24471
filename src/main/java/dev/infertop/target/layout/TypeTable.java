package dev.infertop.target.layout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;

/**
 * enum ggml_type as the target's library names it (ggml_type_name): type number → name. Removed types are
 * gaps (null): their numbers stay reserved because GGUF files store them.
 */
public record TypeTable(List<String> names) {

    public TypeTable {
        names = Collections.unmodifiableList(new ArrayList<>(names));
    }

    /** GGML_TYPE_COUNT of this release (gaps included). */
    public int count() {
        return names.size();
    }

    public String name(int type) {
        String name = type >= 0 && type < names.size() ? names.get(type) : null;
        return name != null ? name : "type#" + type;
    }

    public OptionalInt number(String name) {
        int type = names.indexOf(name);
        return type < 0 ? OptionalInt.empty() : OptionalInt.of(type);
    }
}
