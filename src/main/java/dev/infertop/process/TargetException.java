package dev.infertop.process;

import java.io.IOException;

/**
 * A target library or process cannot be read as infertop needs it. The message alone names the file or
 * process and the problem, so callers print it as one line instead of a stack trace.
 */
public final class TargetException extends IOException {
    public TargetException(String message) {
        super(message);
    }

    public TargetException(String message, Throwable cause) {
        super(message, cause);
    }
}
