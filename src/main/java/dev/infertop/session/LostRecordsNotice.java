package dev.infertop.session;

import java.util.Locale;

/**
 * Says once, on the first interval that lost probe records, that it happened and what keeps them. The header,
 * the JSON's {@code lost_events} and the exporter's counter go on counting; this line is for the user who sees
 * a count grow and does not know why or what to change.
 *
 * <p>Records are lost when the ring buffer fills before the collector reads it: a fast target traced whole
 * (the tiny MoE model at ~2,500 graphs a second with {@code --budget 0} lost 4–12 k records in 3 s with the
 * default 4 MiB ring, none with 64 MiB), or infertop kept off the CPU (it runs at nice 10 once the target has
 * started, so a target on every core is served first). What was lost is missing from the counts and
 * histograms, never guessed: a graph without its arrivals is not attributed, one without its expert ids is
 * unrouted.
 */
final class LostRecordsNotice {
    private final int ringKib;
    private final double budgetPercent;
    private boolean said;

    LostRecordsNotice(int ringKib, double budgetPercent) {
        this.ringKib = ringKib;
        this.budgetPercent = budgetPercent;
    }

    /** The line to print for the run's lost records so far, or null (none lost, or said before). */
    String check(long lostRecords) {
        if (lostRecords <= 0 || said) {
            return null;
        }
        said = true;
        String larger = ringKib >= 1 << 20 ? "" : "a larger --ring-kib (now " + ringKib + ", a power of two up to 1048576)";
        String budget = budgetPercent == 0 ? "a --budget above 0 (now 0: every graph traced)" : "";
        String remedy = larger.isEmpty() && budget.isEmpty() ? "fewer layers on"
                : larger.isEmpty() ? budget : budget.isEmpty() ? larger : larger + " or " + budget;
        return String.format(Locale.ROOT, "infertop: %d probe records lost: the ring buffer filled before infertop "
                + "read it (the target outpaced the collector); %s keeps them. The counts leave out what was lost; "
                + "\"lost\" in the header counts on", lostRecords, remedy);
    }
}
