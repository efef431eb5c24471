package dev.infertop.bpf;

/** One attached probe (a uprobe, a tracepoint program); closing it detaches it at once. */
public interface ProbeLink extends AutoCloseable {
    @Override
    void close();
}
