package dev.infertop.session;

import dev.infertop.metrics.ListenAddress;
import dev.infertop.metrics.MetricsServer;
import dev.infertop.metrics.WebConfig;

import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * {@code --listen HOST:PORT} and {@code --web-config FILE}: a malformed address or a web config that cannot be
 * read, is not valid or names a key infertop does not know when the options are read, an unresolvable address
 * or a taken port when the server starts (before any probe is attached): one line and exit status 2 either way.
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

    /** The web config in {@code file}, or null when {@code --web-config} was not given. */
    public static WebConfig webConfig(Path file, ListenAddress listen) {
        if (file == null) {
            return null;
        }
        if (listen == null) {
            throw new UserError("--web-config sets TLS and basic auth for --listen's endpoint: use it with "
                    + "--listen HOST:PORT", 2);
        }
        try {
            return WebConfig.read(file);
        } catch (IllegalArgumentException e) {
            throw new UserError("--web-config " + file + ": " + e.getMessage(), 2);
        }
    }

    /**
     * The running server, or null when {@code --listen} was not given.
     *
     * @param notices where a wildcard address is warned about, and a failure to render said: stderr
     */
    public static MetricsServer start(ListenAddress address, WebConfig webConfig, Consumer<String> notices) {
        if (address == null) {
            return null;
        }
        try {
            return MetricsServer.start(address, webConfig, notices);
        } catch (MetricsServer.ListenException e) {
            throw new UserError("--listen " + address.text() + ": " + e.getMessage(), 2);
        }
    }
}
