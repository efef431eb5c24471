package dev.infertop.snapshot;

/** A snapshot directory cannot be read; the message names the bad file and says what is wrong with it. */
public final class SnapshotReadException extends Exception {
    public SnapshotReadException(String message) {
        super(message);
    }
}
