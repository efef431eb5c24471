package dev.infertop.history;

import dev.infertop.model.CounterEvent;

import java.util.List;

/**
 * The counters layer over time, as flight-recorder counter samples for a snapshot's timeline: the counts of
 * every thread's attributed graphs are summed into bins of at least {@link #BIN_NS} of wall time; each bin
 * closes with one sample at its end: the L3 refill bandwidth (MB/s) when the set has a refills event, else
 * each event's rate per second. Allocation-free per graph (labels are made when the set changes).
 * Single writer: the collector thread.
 */
public final class CounterTimeline {
    /** A sample per 10 ms at most: about one per decode token of a mid-sized model on a small CPU. */
    static final long BIN_NS = 10_000_000L;
    public static final String REFILL_TRACK = "L3 refill MB/s";

    private final FlightRecorder flight;
    private List<CounterEvent> labelled;
    private int refillsIndex = -1;
    private int lineBytes;
    private int[] labels = new int[0];
    private long[] sums = new long[0];
    private long binStartNs = -1;
    private long binEndNs;

    public CounterTimeline(FlightRecorder flight) {
        this.flight = flight;
    }

    /** The counts (scaled, per event in {@code events} order) of one thread's graph over [startNs, endNs]. */
    public void onGraph(List<CounterEvent> events, int lineBytes, long startNs, long endNs, long[] counts) {
        if (events != labelled) {
            relabel(events, lineBytes);
        }
        if (binStartNs < 0 || endNs < binStartNs) {
            binStartNs = startNs;
            binEndNs = endNs;
        }
        binEndNs = Math.max(binEndNs, endNs);
        for (int e = 0; e < sums.length && e < counts.length; e++) {
            sums[e] += counts[e];
        }
        long spanNs = binEndNs - binStartNs;
        if (spanNs < BIN_NS) {
            return;
        }
        if (refillsIndex >= 0) {
            flight.counter(labels[refillsIndex], binEndNs, sums[refillsIndex] * (double) lineBytes * 1e3 / spanNs);
        } else {
            for (int e = 0; e < sums.length; e++) {
                flight.counter(labels[e], binEndNs, sums[e] * 1e9 / spanNs);
            }
        }
        java.util.Arrays.fill(sums, 0);
        binStartNs = binEndNs;
    }

    private void relabel(List<CounterEvent> events, int lineBytes) {
        labelled = events;
        this.lineBytes = lineBytes;
        refillsIndex = -1;
        labels = new int[events.size()];
        sums = new long[events.size()];
        for (int e = 0; e < events.size(); e++) {
            if (events.get(e).role() == CounterEvent.Role.REFILLS && refillsIndex < 0) {
                refillsIndex = e;
            }
            labels[e] = flight.label(events.get(e).name() + " per s");
        }
        if (refillsIndex >= 0) {
            labels[refillsIndex] = flight.label(REFILL_TRACK);
        }
        java.util.Arrays.fill(sums, 0);
        binStartNs = -1;
    }
}
