package dev.infertop.process;

/**
 * A defined function symbol. {@code vaddr} is st_value (the link-time virtual address, not a file offset);
 * a symbol present in both tables is reported once, as DYNSYM.
 */
public record ElfSymbol(String name, long vaddr, long sizeBytes, SymbolBinding binding, SymbolTable table) {

    /** The source-level name: {@code ggml_graph_compute_thread.isra.0} → {@code ggml_graph_compute_thread}. */
    public String baseName() {
        int dot = name.indexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}
