package dev.infertop.ffi;

/** A system library or one of its symbols is missing: the message says what to install. */
public final class NativeLibraryMissing extends RuntimeException {
    public NativeLibraryMissing(String message) {
        super(message);
    }
}
