package dev.infertop.diff;

/** A side of a diff that cannot be read, or two that cannot be compared: one line for the user. */
public final class DiffInputException extends Exception {
    public DiffInputException(String message) {
        super(message);
    }
}
