package dev.infertop.bpf;

import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;

import java.util.function.Predicate;

/**
 * A layer with no probes of its own, switched by {@link ProbeSet#enable}/{@link ProbeSet#disable} like the
 * others (the counters layer: perf events read by the operator layer's probes).
 */
public interface Switchable extends AutoCloseable {
    void on() throws BpfException;

    void off() throws BpfException;

    /** @param attached whether a layer's probes are attached now (those it reads at, if any) */
    LayerStatus status(Layer layer, boolean wanted, String offReason, Predicate<Layer> attached);

    @Override
    void close();
}
