package dev.infertop.export;

/** A snapshot could not be written; the message is one line for the user (what, where, why). */
public final class SnapshotWriteException extends Exception {
    public SnapshotWriteException(String message, Throwable cause) {
        super(message, cause);
    }
}
