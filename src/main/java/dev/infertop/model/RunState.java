package dev.infertop.model;

/**
 * Where the traced run stands: each snapshot carries it, the JSON's {@code target_state} and the batch text
 * print its {@link #text()}, the live view's header turns it into a label. Every state but {@link #RUNNING}
 * is an end: the snapshot that carries one is the collector's last (or a replayed one).
 */
public enum RunState {
    /** The target runs and is traced (every snapshot but the last). */
    RUNNING("running"),
    /** The target exited. */
    EXITED("exited"),
    /** infertop was stopped (a signal, q, or the reader of its output went away). */
    STOPPED("stopped"),
    /** The -n number of snapshots was reached. */
    DONE("done"),
    /** The live view only: the target exited and --follow waits for the next process of its name. */
    FOLLOWING("following"),
    /** A saved snapshot shown again ({@code replay}): a frozen clock. */
    REPLAY("replay");

    private final String text;

    RunState(String text) {
        this.text = text;
    }

    /** The word printed and written to JSON, as it was when the state was a string. */
    public String text() {
        return text;
    }

    /** Whether the run is over: the snapshot carrying this state is the last one. */
    public boolean ended() {
        return this != RUNNING;
    }
}
