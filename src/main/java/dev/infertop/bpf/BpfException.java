package dev.infertop.bpf;

/** A BPF operation failed; the message is one line a user can act on. */
public final class BpfException extends Exception {
    public BpfException(String message) {
        super(message);
    }
}
