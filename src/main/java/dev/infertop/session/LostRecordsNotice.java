package dev.infertop.session;

import java.util.Locale;

/**
 * Says once, on the first interval that lost probe records, that it happened and what keeps them. The header,
 * the JSON's {@code lost_events} and the exporter's counter go on counting; this line is for the user who sees
 * a count grow and does not know why or what to change.
 *
 * <p>Records are lost when the ring buffer fills before the collector reads it: a fast target traced whole
 * (a tiny model at thousands of graphs a second with {@code --budget 0} can overrun the default ring in its
 * first seconds, where a larger {@code --ring-kib} does not), or infertop kept off the CPU (it runs at nice 10 once the target has
 * started, so a target on every core is served first). What was lost is missing from the counts and
 * histograms, never guessed: a graph without its arrivals is not attributed, one without its expert ids is
 * unrouted. The count is the snapshot's {@code lost_events}, which also holds records that did not decode
 * (none in practice: they come from infertop's own BPF programs), so the line names both.
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
        // The remedy first: the live view shows this on one status line, cut at the terminal's width.
        String larger = ringKib >= 1 << 20 ? "" : "--ring-kib above " + ringKib;
        String budget = budgetPercent == 0 ? "--budget above 0" : "";
        String remedy = larger.isEmpty() && budget.isEmpty() ? "fewer layers on"
                : larger.isEmpty() ? budget : budget.isEmpty() ? larger : larger + " or " + budget;
        return String.format(Locale.ROOT, "infertop: lost %d probe records; %s keeps them (the ring buffer filled "
                + "before infertop read it, the target outpacing the collector, or a record did not decode). The "
                + "counts leave out what was lost", lostRecords, remedy);
    }
}
