package dev.infertop.process.layout;

/**
 * A libggml-base library cannot be calibrated. The message is one line naming the library and what failed
 * ("cannot calibrate /x/libggml-base.so: it lacks ggml_init"), so callers print it instead of a stack trace.
 */
public final class CalibrationException extends Exception {
    public CalibrationException(String message) {
        super(message);
    }

    public CalibrationException(String message, Throwable cause) {
        super(message, cause);
    }

    static CalibrationException of(java.nio.file.Path library, String what) {
        return new CalibrationException("cannot calibrate " + library + ": " + what);
    }
}
