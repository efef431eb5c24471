package dev.infertop.session;

import dev.infertop.metrics.ListenAddress;
import dev.infertop.metrics.MetricsServer;

/**
 * {@code --listen HOST:PORT}: a malformed address when the options are read, an unresolvable one or a taken
 * port when the server starts (before any probe is attached): one line and exit status 2 either way.
 */
public final class ListenOption {
    private ListenOption() {}

    public static ListenAddress parse(String text) {
        if (text == null) {
            return null;
        }
        try {
            return ListenAddress.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UserError("--listen " + text + ": " + e.getMessage(), 2);
        }
    }

    /** The running server, or null when {@code --listen} was not given. */
    public static MetricsServer start(ListenAddress address) {
        if (address == null) {
            return null;
        }
        try {
            return MetricsServer.start(address);
        } catch (MetricsServer.ListenException e) {
            throw new UserError("--listen " + address.text() + ": " + e.getMessage(), 2);
        }
    }
}
