package dev.infertop.model;

/**
 * A task that ran on a CPU while a target thread was waiting for that CPU, summed over the span.
 *
 * @param pid          its process id (the thread's tgid)
 * @param comm         the name of its thread that ran last (the kernel's comm, 15 characters at most)
 * @param ns           time it ran while target threads waited (two waiting threads count twice)
 * @param sameProcess  a thread of the target itself (more threads than CPUs)
 */
public record Interferer(int pid, String comm, long ns, boolean sameProcess) {
    /** Another process chose its name: made visible ({@link SafeText}). */
    public Interferer {
        comm = SafeText.of(comm);
    }
}
