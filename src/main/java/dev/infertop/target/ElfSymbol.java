package dev.infertop.target;

/**
 * A defined function symbol. {@code vaddr} is st_value (the link-time virtual address, not a file offset);
 * a symbol present in both tables is reported once, as DYNSYM.
 */
public record ElfSymbol(String name, long vaddr, long sizeBytes, SymbolBinding binding, SymbolTable table) {

    /**
     * Whether this is a GCC-split cold part ({@code name.cold}, {@code name.cold.3}): code jumped into from the
     * hot part, not a function entry, so a probe there would count slow paths rather than calls.
     */
    public boolean isColdPart() {
        return name.endsWith(".cold") || name.contains(".cold.");
    }

    /** The source-level name: {@code ggml_graph_compute_thread.isra.0} → {@code ggml_graph_compute_thread}. */
    public String baseName() {
        int dot = name.indexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}
