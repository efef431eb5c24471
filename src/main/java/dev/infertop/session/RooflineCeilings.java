package dev.infertop.session;

import dev.infertop.machine.CeilingCache;
import dev.infertop.machine.CeilingMeasurement;
import dev.infertop.machine.MachineCeilings;
import dev.infertop.model.Roofline;

import java.io.IOException;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The machine's ceilings the roofline holds a run against, ready before the first screen: the cached ones; where
 * none are cached and infertop started the target itself (held until the probes are in, so the machine is idle),
 * measured now and cached, one line saying how long and why; where it attached to a running target, not measured
 * (that target's work would lower them, and the measuring would slow it), one line saying how to.
 */
final class RooflineCeilings {
    private RooflineCeilings() {}

    /** The ceilings, or null where none are cached and none could be measured now. */
    static Roofline.Ceilings atStart(boolean targetHeld, Consumer<String> notice) {
        CeilingCache cache = CeilingCache.defaultLocation();
        Optional<MachineCeilings> cached = cache.best();
        if (cached.isPresent()) {
            return cached.get().roofs();
        }
        int threads = Runtime.getRuntime().availableProcessors();
        if (!targetHeld) {
            notice.accept("infertop: no ceilings cached for this machine, so the roofline (R) gives no verdict: "
                    + "`infertop machine` measures them once (about 10 s, best with the machine idle; not now, beside "
                    + "the running target)");
            return null;
        }
        notice.accept("infertop: measuring this machine's ceilings for the roofline once, before the command starts "
                + "(about 10 s on " + threads + " threads, while the machine is idle; cached in "
                + cache.fileFor(threads).getParent() + ")");
        try {
            MachineCeilings measured = CeilingMeasurement.measure(threads);
            try {
                cache.store(measured);
            } catch (IOException e) {
                notice.accept("infertop: cannot cache the ceilings in " + cache.fileFor(threads) + ": " + e.getMessage());
            }
            return measured.roofs();
        } catch (IOException | RuntimeException e) {
            notice.accept("infertop: cannot measure this machine's ceilings (" + e.getMessage()
                    + "): the roofline gives no verdict; `infertop machine` says why");
            return null;
        }
    }
}
