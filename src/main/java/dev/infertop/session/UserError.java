package dev.infertop.session;

/** Bad input or an unusable environment: printed as one line ("infertop: ..."), never as a stack trace. */
public final class UserError extends RuntimeException {
    private final int exitCode;

    public UserError(String message) {
        this(message, 1);
    }

    public UserError(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
